// Command files is the bundled "files" tool module: read_file, list_dir,
// file_info, write_file and search_files over the folder the host mounts
// at /data through WASI (the filesystem capability). write_file works only
// when the mount is read-write. The config key root moves the folder
// (tests use it).
//
// The tools are ordinary Go and are tested natively; exports.go (wasip1
// only) holds the Wasm exports. Build with ./build.sh.
package main

func main() {}
