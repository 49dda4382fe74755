package install_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/install"
	"github.com/skillhost/skillhost/install/sign"
)

// bigSkill builds a skill archive of about size bytes (incompressible
// assets beside its SKILL.md).
func bigSkill(b *testing.B, name string, size int) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), name)
	os.MkdirAll(filepath.Join(dir, "assets"), 0o755)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(skillMD(name, "uses assets/")), 0o644)
	blob := make([]byte, size)
	rand.Read(blob)
	os.WriteFile(filepath.Join(dir, "assets", "data.bin"), blob, 0o644)
	var buf bytes.Buffer
	if err := install.Build(&buf, dir, install.ArchiveLimits{}); err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), name+".tar.gz")
	os.WriteFile(file, buf.Bytes(), 0o644)
	return file
}

func benchRegistry(b *testing.B) (*install.Installer, string) {
	b.Helper()
	srv, _ := registryServer(b)
	in := &install.Installer{Client: srv.Client(), DockerConfig: filepath.Join(b.TempDir(), "none.json")}
	return in, strings.TrimPrefix(srv.URL, "https://")
}

// BenchmarkInstallFromRegistry installs a 5 MB pack from a registry on
// loopback into an empty installed folder: fetch, verify, unpack,
// validate, lock.
func BenchmarkInstallFromRegistry(b *testing.B) {
	size := 5 << 20
	if testing.Short() {
		size = 64 << 10
	}
	pub, host := benchRegistry(b)
	ctx := context.Background()
	file := bigSkill(b, "assets", size)
	if _, err := pub.Push(ctx, file, host+"/bench/assets:1"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ws := b.TempDir()
		in := &install.Installer{Dir: filepath.Join(ws, "installed"), LockFile: filepath.Join(ws, install.LockFile), Client: pub.Client, DockerConfig: pub.DockerConfig}
		if _, err := in.Install(ctx, install.Request{Source: "oci://" + host + "/bench/assets:1"}); err != nil {
			b.Fatal(err)
		}
	}
}

// lockedPacks installs n small skills from the registry and returns the
// installer.
func lockedPacks(b *testing.B, n int) *install.Installer {
	b.Helper()
	pub, host := benchRegistry(b)
	ctx := context.Background()
	ws := b.TempDir()
	in := &install.Installer{Dir: filepath.Join(ws, "installed"), LockFile: filepath.Join(ws, install.LockFile), Client: pub.Client, DockerConfig: pub.DockerConfig}
	for i := range n {
		name := fmt.Sprintf("skill-%03d", i)
		file := bigSkill(b, name, 4<<10)
		ref := fmt.Sprintf("%s/bench/%s:1", host, name)
		if _, err := pub.Push(ctx, file, ref); err != nil {
			b.Fatal(err)
		}
		if _, err := in.Install(ctx, install.Request{Source: "oci://" + ref}); err != nil {
			b.Fatal(err)
		}
	}
	return in
}

// BenchmarkSyncLocked100 puts back 100 locked packs from the registry
// into an emptied installed folder (install with no source): every one
// fetched at its locked digest and checked against its content digest.
func BenchmarkSyncLocked100(b *testing.B) {
	n := 100
	if testing.Short() {
		n = 5
	}
	in := lockedPacks(b, n)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		ents, _ := os.ReadDir(in.Dir)
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".") {
				os.RemoveAll(filepath.Join(in.Dir, e.Name()))
			}
		}
		b.StartTimer()
		st, err := in.Sync(ctx)
		if err != nil || len(st) != n {
			b.Fatalf("%d synced, %v", len(st), err)
		}
	}
}

// BenchmarkLockCheck100 is the check every command that loads skills
// makes first: 100 installed packs against their content digests.
func BenchmarkLockCheck100(b *testing.B) {
	n := 100
	if testing.Short() {
		n = 5
	}
	in := lockedPacks(b, n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		lock, err := install.ReadLock(in.LockFile)
		if err != nil {
			b.Fatal(err)
		}
		if err := lock.Check(in.Dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify100 verifies 100 keyed bundles offline, as a re-check
// of a locked set does.
func BenchmarkVerify100(b *testing.B) {
	priv, pub, err := sign.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	trust := &sign.Trust{Keys: [][]byte{pub}}
	type signed struct{ artifact, bundle []byte }
	var all []signed
	for i := range 100 {
		a := []byte(fmt.Sprintf("archive %d", i))
		bdl, err := sign.Sign(a, priv)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, signed{a, bdl})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, s := range all {
			if _, err := trust.Verify(s.artifact, s.bundle); err != nil {
				b.Fatal(err)
			}
		}
	}
}
