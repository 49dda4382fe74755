//go:build wasip1

package main

// One export per tool; the skill package adds describe. The functions are
// called by the host, which staticcheck cannot see.

//lint:file-ignore U1000 exported through go:wasmexport

//go:wasmexport read_file
func readFileExport() int32 { return readFileTool.Run() }

//go:wasmexport list_dir
func listDirExport() int32 { return listDirTool.Run() }

//go:wasmexport file_info
func fileInfoExport() int32 { return fileInfoTool.Run() }

//go:wasmexport write_file
func writeFileExport() int32 { return writeFileTool.Run() }

//go:wasmexport search_files
func searchFilesExport() int32 { return searchFilesTool.Run() }
