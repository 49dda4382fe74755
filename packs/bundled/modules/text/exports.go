//go:build wasip1

package main

// One export per tool; the skill package adds describe. The functions are
// called by the host, which staticcheck cannot see.

//lint:file-ignore U1000 exported through go:wasmexport

//go:wasmexport slugify
func slugifyExport() int32 { return slugifyTool.Run() }

//go:wasmexport word_count
func wordCountExport() int32 { return wordCountTool.Run() }

//go:wasmexport case_convert
func caseConvertExport() int32 { return caseConvertTool.Run() }

//go:wasmexport text_diff
func textDiffExport() int32 { return textDiffTool.Run() }

//go:wasmexport regex_extract
func regexExtractExport() int32 { return regexExtractTool.Run() }

//go:wasmexport regex_replace
func regexReplaceExport() int32 { return regexReplaceTool.Run() }
