package skill_test

import (
	"fmt"

	"github.com/skillhost/skillhost/guests/go/skill"
)

type AddIn struct {
	A int `json:"a" desc:"First addend"`
	B int `json:"b" desc:"Second addend"`
}

type AddOut struct {
	Sum int `json:"sum"`
}

// Register the tool from a package-level variable; in a module, an export
// calls add.Run():
//
//	//go:wasmexport add
//	func addExport() int32 { return add.Run() }
var add = skill.Tool("add", func(in AddIn) (AddOut, error) {
	return AddOut{Sum: in.A + in.B}, nil
}, skill.Describe("Add two integers"))

func Example() {
	// Invoke runs a tool natively, as its export would: handy in tests.
	out, err := skill.Invoke(add.Name(), []byte(`{"a":2,"b":3}`))
	fmt.Println(string(out), err)

	_, err = skill.Invoke("add", []byte(`{"a":2}`))
	fmt.Println(err)
	// Output:
	// {"sum":5} <nil>
	// invalid_input: invalid arguments: missing required field "b"
}
