package rewrite_test

import (
	"fmt"

	"github.com/skillhost/skillhost/host/internal/rewrite"
)

// A module whose only function spins: (func (export "spin") (loop (br 0))).
var spin = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
	0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type 0: () -> ()
	0x03, 0x02, 0x01, 0x00, // function 0: type 0
	0x07, 0x08, 0x01, 0x04, 's', 'p', 'i', 'n', 0x00, 0x00, // export "spin"
	0x0a, 0x09, 0x01, 0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, // loop br 0 end end
}

func ExampleInstrument() {
	out, info, err := rewrite.Instrument(spin, rewrite.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d bytes -> %d bytes\n", len(spin), len(out))
	fmt.Printf("budget global exported as %q\n", info.BudgetExport)
	fmt.Printf("refuel is function %d; %d checks\n", info.RefuelFunc, info.Checks)
	// Output:
	// 39 bytes -> 143 bytes
	// budget global exported as "__skillhost_budget"
	// refuel is function 0; 2 checks
}
