package install_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/skillhost/skillhost/install"
)

// registryServer is an OCI registry (go-containerregistry's, the real
// protocol) on loopback over TLS; flip, when set, corrupts the body of
// blob responses.
func registryServer(t testing.TB) (*httptest.Server, *atomic.Bool) {
	t.Helper()
	reg := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	var flip atomic.Bool
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if flip.Load() && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			rec := httptest.NewRecorder()
			reg.ServeHTTP(rec, r)
			body := rec.Body.Bytes()
			if len(body) > 0 {
				body[len(body)/2] ^= 0xff
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(body)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &flip
}

// packArchive builds a pack of one module (a real, tiny module) into a
// .tar.gz and returns its path.
func packArchive(t *testing.T, name string, hosts ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	writeTree(t, dir, packYAML(name, hosts...))
	var buf bytes.Buffer
	if err := install.Build(&buf, dir, install.ArchiveLimits{}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), name+".tar.gz")
	os.WriteFile(file, buf.Bytes(), 0o644)
	return file
}

func TestOCIPushAndInstall(t *testing.T) {
	srv, flip := registryServer(t)
	host := strings.TrimPrefix(srv.URL, "https://")
	ctx := context.Background()
	in := newInstaller(t)
	in.Client = srv.Client()
	in.DockerConfig = filepath.Join(t.TempDir(), "none.json")

	v1 := packArchive(t, "weather", "api.weather.example")
	d1, err := in.Push(ctx, v1, "oci://"+host+"/skills/weather:1")
	if err != nil {
		t.Fatal(err)
	}
	// Another tool reads the module in the CNCF Wasm layout.
	ref, _ := name.ParseReference(host + "/skills/weather:1")
	idx, err := remote.Index(ref, remote.WithTransport(srv.Client().Transport))
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 2 {
		t.Fatalf("index %+v, %v", im, err)
	}
	img, err := idx.Image(im.Manifests[1].Digest)
	if err != nil {
		t.Fatal(err)
	}
	mf, _ := img.Manifest()
	if string(mf.Config.MediaType) != install.WasmConfigType || len(mf.Layers) != 1 || string(mf.Layers[0].MediaType) != install.WasmLayerType {
		t.Fatalf("the module's manifest %+v", mf)
	}
	// The same archive pushes the same index.
	if again, err := in.Push(ctx, v1, host+"/skills/weather:again"); err != nil || again != d1 {
		t.Fatalf("pushed twice: %s, %s, %v", d1, again, err)
	}

	got, err := in.Install(ctx, install.Request{Source: "oci://" + host + "/skills/weather:1"})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Name != "weather" || got[0].Kind != "pack" || got[0].Resolved != d1 {
		t.Fatalf("installed %+v; want weather at %s", got[0], d1)
	}

	// The tag moves to a version that asks for more: Sync keeps the
	// locked digest; install stops for approval.
	v2 := packArchive(t, "weather", "api.weather.example", "*.tracker.example")
	if _, err := in.Push(ctx, v2, host+"/skills/weather:1"); err != nil {
		t.Fatal(err)
	}
	if od, err := in.Outdated(ctx); err != nil || len(od) != 1 || od[0].Locked != d1 || od[0].Latest == d1 {
		t.Fatalf("outdated after the tag moved: %+v, %v", od, err)
	}
	os.RemoveAll(filepath.Join(in.Dir, "weather"))
	if _, err := in.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	lock, _ := install.ReadLock(in.LockFile)
	if e := lock.Find("weather"); e.Resolved != d1 || e.Source != "oci://"+host+"/skills/weather:1" {
		t.Fatalf("after Sync: %+v", e)
	}
	if err := lock.Check(in.Dir); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Install(ctx, install.Request{Source: "oci://" + host + "/skills/weather:1"}); !errors.Is(err, install.ErrNeedsApproval) {
		t.Fatalf("an upgrade asking for a new host: %v", err)
	}

	// A digest that is not the one pushed.
	if _, err := in.Install(ctx, install.Request{Source: "oci://" + host + "/skills/weather@sha256:" + strings.Repeat("1", 64)}); err == nil {
		t.Fatal("installed a digest never pushed")
	}
	// Bytes changed on the way: refused, nothing written.
	in2 := newInstaller(t)
	in2.Client, in2.DockerConfig = srv.Client(), in.DockerConfig
	flip.Store(true)
	_, err = in2.Install(ctx, install.Request{Source: "oci://" + host + "/skills/weather@" + d1})
	flip.Store(false)
	if !errors.Is(err, install.ErrDigestMismatch) {
		t.Fatalf("a corrupted blob: %v", err)
	}
	if got := installed(t, in2); len(got) != 0 {
		t.Fatalf("installed %v from a corrupted blob", got)
	}
	// Not a skillhost artifact.
	if _, err := in2.Install(ctx, install.Request{Source: "oci://" + host + "/skills/nothing:1"}); err == nil {
		t.Fatal("installed a tag that does not exist")
	}
}
