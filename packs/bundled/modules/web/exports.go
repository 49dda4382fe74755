//go:build wasip1

package main

// One export per tool; the skill package adds describe. The functions are
// called by the host, which staticcheck cannot see.

//lint:file-ignore U1000 exported through go:wasmexport

//go:wasmexport http_fetch
func httpFetchExport() int32 { return httpFetchTool.Run() }
