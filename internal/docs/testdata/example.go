package example

import (
	"fmt"
	"os"
	"strings"

	"github.com/openai/openai-go/v3"
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

func ExampleUnknown() {
	fmt.Println(openai.F)
}
