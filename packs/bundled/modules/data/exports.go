//go:build wasip1

package main

// One export per tool; the skill package adds describe. The functions are
// called by the host, which staticcheck cannot see.

//lint:file-ignore U1000 exported through go:wasmexport

//go:wasmexport json_query
func jsonQueryExport() int32 { return jsonQueryTool.Run() }

//go:wasmexport json_format
func jsonFormatExport() int32 { return jsonFormatTool.Run() }

//go:wasmexport tz_convert
func tzConvertExport() int32 { return tzConvertTool.Run() }

//go:wasmexport encode
func encodeExport() int32 { return encodeTool.Run() }

//go:wasmexport decode
func decodeExport() int32 { return decodeTool.Run() }

//go:wasmexport hash
func hashExport() int32 { return hashTool.Run() }
