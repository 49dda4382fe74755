package example

import (
	"fmt"
	"os"
	"strings"

	"github.com/skillhost/skillhost/abi"
)

var _ = os.Args

func ExampleHello() {
	s := strings.ToUpper("hi") // shout
	if s != "" {
		fmt.Println(s, abi.Version)
	}
	// Output: HI
}

func ExampleMain() {
	fmt.Println("main")

	// ...
}
