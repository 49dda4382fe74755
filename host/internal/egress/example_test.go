package egress_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/skillhost/skillhost/host/internal/egress"
)

func ExampleClient_Do() {
	c, err := egress.NewClient(egress.Policy{AllowedHosts: []string{"*"}})
	if err != nil {
		panic(err)
	}
	// A guest aims at the cloud metadata service. Every host is allowed, but
	// private addresses are not: the request is refused before anything is
	// sent.
	_, err = c.Do(context.Background(), egress.Request{URL: "http://169.254.169.254/latest/meta-data/"})
	fmt.Println(errors.Is(err, egress.ErrAddressDenied))
	fmt.Println(err)
	// Output:
	// true
	// http request to "http://169.254.169.254/latest/meta-data/" refused: host "169.254.169.254" is a cloud metadata endpoint and allow_private_network is off
}

func ExampleClient_HostAllowed() {
	c, err := egress.NewClient(egress.Policy{AllowedHosts: []string{"api.example.com", "*.example.org"}})
	if err != nil {
		panic(err)
	}
	for _, h := range []string{"API.example.com", "a.b.example.org", "example.org", "example.com"} {
		fmt.Println(h, c.HostAllowed(h))
	}
	// Output:
	// API.example.com true
	// a.b.example.org true
	// example.org false
	// example.com false
}
