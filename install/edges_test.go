package install_test

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/install"
	"github.com/skillhost/skillhost/install/sign"
)

// The edges of the installer's rules, each a change to a rule that no
// other test noticed.

func writeLock(t *testing.T, body string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), install.LockFile)
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

var goodDigest = "sha256:" + strings.Repeat("ab", 32)

func lockEntry(name, kind, digest string) string {
	return "[[installed]]\nname = \"" + name + "\"\nkind = \"" + kind + "\"\nsource = \"x\"\ndigest = \"" + digest + "\"\n"
}

func TestReadLockRefusals(t *testing.T) {
	long := strings.Repeat("a", 128)
	good := []string{
		"version = 1\n",
		"version = 1\n" + lockEntry("pdf", "skill", goodDigest) + lockEntry("web.tools_2-x", "pack", goodDigest),
		"version = 1\n" + lockEntry(long, "pack", goodDigest),
	}
	for _, body := range good {
		if _, err := install.ReadLock(writeLock(t, body)); err != nil {
			t.Errorf("%q: %v", body, err)
		}
	}
	bad := map[string]string{
		"syntax":             "version = \n",
		"unknown key":        "version = 1\ncolour = \"blue\"\n",
		"no version":         lockEntry("pdf", "skill", goodDigest),
		"version 2":          "version = 2\n",
		"empty name":         "version = 1\n" + lockEntry("", "skill", goodDigest),
		"upper case":         "version = 1\n" + lockEntry("PDF", "skill", goodDigest),
		"hidden":             "version = 1\n" + lockEntry(".pdf", "skill", goodDigest),
		"leading dash":       "version = 1\n" + lockEntry("-pdf", "skill", goodDigest),
		"slash":              "version = 1\n" + lockEntry("a/b", "skill", goodDigest),
		"dot dot":            "version = 1\n" + lockEntry("..", "skill", goodDigest),
		"too long":           "version = 1\n" + lockEntry(long+"a", "skill", goodDigest),
		"twice":              "version = 1\n" + lockEntry("pdf", "skill", goodDigest) + lockEntry("pdf", "pack", goodDigest),
		"kind":               "version = 1\n" + lockEntry("pdf", "plugin", goodDigest),
		"digest":             "version = 1\n" + lockEntry("pdf", "skill", "sha256:abc"),
		"digest upper":       "version = 1\n" + lockEntry("pdf", "skill", "sha256:"+strings.Repeat("AB", 32)),
		"digest not hex":     "version = 1\n" + lockEntry("pdf", "skill", "sha256:"+strings.Repeat("zz", 32)),
		"digest other algo":  "version = 1\n" + lockEntry("pdf", "skill", "sha512:"+strings.Repeat("ab", 32)),
		"digest no prefix":   "version = 1\n" + lockEntry("pdf", "skill", strings.Repeat("ab", 32)),
		"digest one too few": "version = 1\n" + lockEntry("pdf", "skill", "sha256:"+strings.Repeat("ab", 31)+"a"),
	}
	for name, body := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := install.ReadLock(writeLock(t, body)); !errors.Is(err, install.ErrLock) {
				t.Fatalf("err %v, want ErrLock", err)
			}
		})
	}
	// A lock that is a folder cannot be read: an error, not an empty lock.
	if _, err := install.ReadLock(t.TempDir()); err == nil {
		t.Fatal("a folder read as a lock")
	}
}

// Uninstall takes only names an install could have made.
func TestUninstallNames(t *testing.T) {
	in := newInstaller(t)
	for _, n := range []string{"", ".", "..", ".hidden", "-x", "A", "a/b", "a b", strings.Repeat("a", 129)} {
		if err := in.Uninstall(n); !errors.Is(err, install.ErrBadSource) {
			t.Errorf("Uninstall(%q): %v", n, err)
		}
	}
}

// Digests given to Install are checked before anything is fetched.
func TestRequestDigests(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "pdf.tar.gz")
	os.WriteFile(archive, tarGz(t, entry{name: "pdf/SKILL.md", body: skillMD("pdf", "x")}), 0o644)
	in := newInstaller(t)
	for _, d := range []string{"sha256:abc", "sha256:" + strings.Repeat("AB", 32), "md5:" + strings.Repeat("ab", 32), strings.Repeat("ab", 32), "sha256:" + strings.Repeat("gg", 32)} {
		if _, err := in.Install(context.Background(), install.Request{Source: archive, Digest: d}); !errors.Is(err, install.ErrBadSource) {
			t.Errorf("digest %q: %v", d, err)
		}
	}
	// A folder, an index, a repository and an OCI artifact are pinned
	// otherwise: a digest for them is a mistake.
	if _, err := in.Install(context.Background(), install.Request{Source: t.TempDir(), Digest: goodDigest}); !errors.Is(err, install.ErrBadSource) {
		t.Errorf("a digest for a folder: %v", err)
	}
	if got := installed(t, in); len(got) != 0 {
		t.Fatalf("installed %v", got)
	}
}

// Names at their limits: 1,024 bytes and 255 a segment pass, one more
// does not; space passes, other control characters and DEL do not.
func TestEntryNameLimits(t *testing.T) {
	seg := strings.Repeat("s", 255)
	name1024 := seg + "/" + seg + "/" + seg + "/" + seg[:254] + "/s"
	if len(name1024) != 1024 {
		t.Fatalf("test name of %d bytes", len(name1024))
	}
	ok := []string{name1024, seg, "with space", "tab-free~name", "ünïcödé"}
	for _, n := range ok {
		if _, _, err := unpack(t, tarGz(t, entry{name: n, body: "x"}), install.ArchiveLimits{}); err != nil {
			t.Errorf("%d-byte name %.40q: %v", len(n), n, err)
		}
	}
	refused := []string{name1024 + "x", seg + "s", "a\x1fb", "a\x7fb"}
	for _, n := range refused {
		if _, _, err := unpack(t, tarGz(t, entry{name: n, body: "x"}), install.ArchiveLimits{}); !errors.Is(err, install.ErrUnsafeArchive) {
			t.Errorf("%d-byte name %.40q: %v", len(n), n, err)
		}
	}
}

// The archive's own folder ("./", ".") is no entry; a file of that name
// is refused.
func TestArchiveRootEntries(t *testing.T) {
	_, u, err := unpack(t, tarGz(t, entry{name: ".", typ: '5'}, entry{name: "./", typ: '5'}, entry{name: "a", body: "x"}), install.ArchiveLimits{})
	if err != nil || len(u.Files) != 1 {
		t.Fatalf("root folders: %+v, %v", u, err)
	}
	if _, _, err := unpack(t, tarGz(t, entry{name: ".", body: "x"}), install.ArchiveLimits{}); !errors.Is(err, install.ErrUnsafeArchive) {
		t.Errorf("a file named \".\": %v", err)
	}
}

// Folder entries meet the rules files do.
func TestFolderEntries(t *testing.T) {
	dir := func(n string) entry { return entry{name: n, typ: '5'} }
	cases := map[string][]entry{
		"dot dot":          {dir("../x/")},
		"absolute":         {dir("/x/")},
		"not canonical":    {dir("a//b/")},
		"file then folder": {{name: "a", body: "x"}, dir("a/")},
		"file above":       {{name: "a", body: "x"}, dir("a/b/")},
		"case":             {dir("Docs/"), dir("docs/")},
	}
	for name, es := range cases {
		for format, make := range map[string]func(testing.TB, ...entry) []byte{"tar.gz": tarGz, "zip": zipOf} {
			t.Run(name+"/"+format, func(t *testing.T) {
				if _, _, err := unpack(t, make(t, es...), install.ArchiveLimits{}); !errors.Is(err, install.ErrUnsafeArchive) {
					t.Fatalf("err %v, want ErrUnsafeArchive", err)
				}
			})
		}
	}
	// The same folder twice, and a folder then its files, are fine.
	out, u, err := unpack(t, tarGz(t, dir("docs/"), dir("docs/"), entry{name: "docs/a.md", body: "a"}, dir("docs/sub/")), install.ArchiveLimits{})
	if err != nil || len(u.Files) != 1 {
		t.Fatalf("%+v, %v", u, err)
	}
	if st, err := os.Stat(filepath.Join(out, "docs", "sub")); err != nil || !st.IsDir() {
		t.Fatalf("docs/sub: %v", err)
	}
	// Folders count against the entries.
	if _, _, err := unpack(t, tarGz(t, dir("a/"), dir("b/"), dir("c/")), install.ArchiveLimits{MaxFiles: 2}); !errors.Is(err, install.ErrTooLarge) {
		t.Fatalf("three folders under a limit of two: %v", err)
	}
}

// A duplicate and a case collision are told apart, and each error names
// the entry as the archive wrote it.
func TestCollisionMessages(t *testing.T) {
	_, _, err := unpack(t, tarGz(t, entry{name: "SKILL.md", body: "1"}, entry{name: "./SKILL.md", body: "2"}), install.ArchiveLimits{})
	var ee *install.EntryError
	if !errors.As(err, &ee) || ee.Entry != "./SKILL.md" || !strings.Contains(ee.Why, "same name") {
		t.Fatalf("a duplicate: %v", err)
	}
	_, _, err = unpack(t, tarGz(t, entry{name: "SKILL.md", body: "1"}, entry{name: "skill.md", body: "2"}), install.ArchiveLimits{})
	if !errors.As(err, &ee) || ee.Entry != "skill.md" || !strings.Contains(ee.Why, "case-insensitive") {
		t.Fatalf("a case collision: %v", err)
	}
}

func TestZipEdges(t *testing.T) {
	// An encrypted entry (the flag set by hand).
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "secret", Method: zip.Store, Flags: 0x1})
	w.Write([]byte("x"))
	zw.Close()
	if _, _, err := unpack(t, buf.Bytes(), install.ArchiveLimits{}); !errors.Is(err, install.ErrUnsafeArchive) {
		t.Errorf("an encrypted entry: %v", err)
	}
	// A declared size over the limit is refused before anything is written.
	out, _, err := unpack(t, zipOf(t, entry{name: "big", body: strings.Repeat("b", 5000)}), install.ArchiveLimits{MaxFileBytes: 4096})
	if !errors.Is(err, install.ErrTooLarge) {
		t.Errorf("a large entry: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "big")); err == nil {
		t.Error("the large entry was written")
	}
	// An empty zip is an empty archive.
	_, u, err := unpack(t, zipOf(t), install.ArchiveLimits{})
	if err != nil || len(u.Files) != 0 {
		t.Errorf("an empty zip: %+v, %v", u, err)
	}
	// More entries than allowed, counted from the directory.
	if _, _, err := unpack(t, zipOf(t, entry{name: "a"}, entry{name: "b"}, entry{name: "c"}), install.ArchiveLimits{MaxFiles: 2}); !errors.Is(err, install.ErrTooLarge) {
		t.Errorf("three entries under a limit of two: %v", err)
	}
}

func TestBrokenStreams(t *testing.T) {
	good := tarGz(t, entry{name: "a", body: strings.Repeat("x", 3000)}, entry{name: "b", body: "y"})
	// The gzip trailer (CRC and size) changed: read to the end, refused.
	trailer := bytes.Clone(good)
	trailer[len(trailer)-5] ^= 0xff
	// A gzip header that is not one.
	header := bytes.Clone(good)
	header[2] = 0x99
	// A tar header cut in the middle.
	var cut bytes.Buffer
	zw := gzip.NewWriter(&cut)
	var tarBuf bytes.Buffer
	writeTar(t, &tarBuf, []entry{{name: "a", body: "x"}})
	zw.Write(tarBuf.Bytes()[:300])
	zw.Close()
	for name, b := range map[string][]byte{"trailer": trailer, "header": header, "cut tar": cut.Bytes(), "short": []byte("PK")} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := unpack(t, b, install.ArchiveLimits{}); !errors.Is(err, install.ErrBadArchive) {
				t.Fatalf("err %v, want ErrBadArchive", err)
			}
		})
	}
	// A plain tar shorter than a header is not one.
	var small bytes.Buffer
	writeTar(t, &small, []entry{{name: "a", body: "x"}})
	if _, _, err := unpack(t, small.Bytes()[:261], install.ArchiveLimits{}); !errors.Is(err, install.ErrBadArchive) {
		t.Fatalf("261 bytes of tar: %v", err)
	}
	// A missing archive file is an error, not an empty install.
	if _, err := install.Unpack(filepath.Join(t.TempDir(), "none"), t.TempDir(), install.ArchiveLimits{}); err == nil {
		t.Fatal("unpacked a file that does not exist")
	}
	if _, err := install.Unpack(filepath.Join(t.TempDir()), filepath.Join(t.TempDir(), "none"), install.ArchiveLimits{}); err == nil {
		t.Fatal("unpacked into a folder that does not exist")
	}
}

// referenceDigest is the content digest written out step by step.
func referenceDigest(files map[string]string) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		s := sha256.Sum256([]byte(files[p]))
		io.WriteString(h, p)
		h.Write([]byte{0})
		h.Write(s[:])
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// The lines are sorted by the whole path, byte by byte: "a.txt" before
// "a/b", which a walk of the folders visits the other way round.
func TestContentDigestSortsWholePaths(t *testing.T) {
	files := map[string]string{"a/b": "1", "a.txt": "2", "a-c": "3", "B": "4"}
	fsys := fstest.MapFS{}
	for p, b := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(b)}
	}
	got, err := install.ContentDigest(fsys)
	if err != nil || got != referenceDigest(files) {
		t.Fatalf("%s, %v; want %s", got, err, referenceDigest(files))
	}
	// .git counts in a tree's digest (an installed tree has none).
	fsys[".git/HEAD"] = &fstest.MapFile{Data: []byte("x")}
	if with, _ := install.ContentDigest(fsys); with == got {
		t.Fatal(".git left out of ContentDigest")
	}
	for _, bad := range []string{"a\x1fb", "a\x7fb"} {
		if _, err := install.ContentDigest(fstest.MapFS{bad: {Data: []byte("x")}}); !errors.Is(err, install.ErrUnsafeArchive) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if d, err := install.ContentDigest(fstest.MapFS{"a b": {Data: []byte("x")}}); err != nil || d != referenceDigest(map[string]string{"a b": "x"}) {
		t.Errorf("a space: %s, %v", d, err)
	}
	if _, err := install.DirDigest(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a digest of a folder that does not exist")
	}
}

// The lock check names a locked folder that is missing, and skips the
// hidden folders installs use.
func TestLockCheckEdges(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{"SKILL.md": skillMD("pdf", "x")})
	in := newInstaller(t)
	if _, err := in.Install(context.Background(), install.Request{Source: src}); err != nil {
		t.Fatal(err)
	}
	lock, _ := install.ReadLock(in.LockFile)
	os.MkdirAll(filepath.Join(in.Dir, ".staging-123"), 0o755)
	if err := lock.Check(in.Dir); err != nil {
		t.Fatalf("a hidden folder: %v", err)
	}
	os.RemoveAll(filepath.Join(in.Dir, "pdf"))
	err := lock.Check(in.Dir)
	if !errors.Is(err, install.ErrLock) || !strings.Contains(err.Error(), filepath.Join(in.Dir, "pdf")) {
		t.Fatalf("a locked folder missing: %v", err)
	}
	// An installed folder that is not a folder.
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, []byte("x"), 0o644)
	if err := (&install.Lock{}).Check(notDir); err == nil {
		t.Fatal("a file checked as an installed folder")
	}
	// No installed folder yet and an empty lock: nothing to say.
	if err := (&install.Lock{}).Check(filepath.Join(t.TempDir(), "none")); err != nil {
		t.Fatalf("no folder, no lock: %v", err)
	}
}

// The trust policy's host lists: exact hosts, any case, file:// git
// repositories always allowed.
func TestPolicyHostLists(t *testing.T) {
	ctx := context.Background()
	p := &install.Policy{Registries: []string{"registry.example"}, GitHosts: []string{"git.example"}, Sites: []string{"skills.example"}}
	in := newInstaller(t)
	in.Policy = p
	for _, src := range []string{
		"oci://other.example/a/b:1",
		"https://git.other.example/a/b.git",
		"https://elsewhere.example/a.tar.gz",
		"https://elsewhere.example",
	} {
		if _, err := in.Install(ctx, install.Request{Source: src}); !errors.Is(err, install.ErrBadSource) || !strings.Contains(err.Error(), "trust policy") {
			t.Errorf("%s: %v", src, err)
		}
	}
	// Allowed hosts get past the policy (and fail later, here: nothing
	// serves them).
	for _, src := range []string{"oci://REGISTRY.example/a/b:1", "https://skills.example/a.tar.gz"} {
		if _, err := in.Install(ctx, install.Request{Source: src, Approve: true}); err == nil || strings.Contains(err.Error(), "trust policy") {
			t.Errorf("%s: %v", src, err)
		}
	}
	bare, _, _ := gitRepo(t)
	if _, err := in.Install(ctx, install.Request{Source: "git+file://" + bare + "/skills/alpha"}); err != nil {
		t.Errorf("a file:// repository under a git host list: %v", err)
	}
}

func TestTrustsAndRestrictEdges(t *testing.T) {
	p := &install.Policy{Trust: &sign.Trust{Identities: []sign.Identity{{Issuer: "https://iss.example", Subject: "ci@acme.example"}}}}
	for _, c := range []struct {
		id, issuer string
		want       bool
	}{
		{"ci@acme.example", "https://iss.example", true},
		{"other@acme.example", "https://iss.example", false},
		{"", "https://iss.example", false},
		{"ci@acme.example", "", false},
	} {
		if got := p.Trusts(c.id, c.issuer); got != c.want {
			t.Errorf("Trusts(%q, %q) = %v", c.id, c.issuer, got)
		}
	}
	if (&install.Policy{}).Trusts("sha256:"+strings.Repeat("ab", 32), "") {
		t.Error("a policy without a Trust trusts a key")
	}
	// An identity with an empty subject trusts no one whose subject is
	// empty: there is no "any signer".
	empty := &install.Policy{Trust: &sign.Trust{Identities: []sign.Identity{{Issuer: "https://iss.example"}}}}
	if empty.Trusts("", "https://iss.example") || empty.Trusts("x", "https://iss.example") {
		t.Error("an identity without a subject trusts someone")
	}
	// Each way out is withheld on its own.
	if g, why := install.Restrict(host.Grant{AllowPrivateNetwork: true}); g.AllowPrivateNetwork || len(why) != 1 {
		t.Errorf("private network alone: %+v %q", g, why)
	}
	if g, why := install.Restrict(host.Grant{AllowedHosts: []string{"a.example"}}); len(g.AllowedHosts) != 0 || len(why) != 1 {
		t.Errorf("hosts alone: %+v %q", g, why)
	}
}

// Signatures and policies at their edges: no policy needs no signature,
// a policy that does not require one lets an unsigned remote source in,
// a policy with no Trust refuses any signature, and an entry the lock
// approved unsigned is put back unsigned under a signing policy.
func TestSignaturePolicyEdges(t *testing.T) {
	ctx := context.Background()
	data := tarGz(t, entry{name: "pdf/SKILL.md", body: skillMD("pdf", "x")})
	srv := serve(t, map[string][]byte{"/pdf.tar.gz": data})
	url := srv.URL + "/pdf.tar.gz"

	in := newInstaller(t)
	in.Client = srv.Client()
	if _, err := in.Install(ctx, install.Request{Source: url}); err != nil {
		t.Fatalf("no policy: %v", err)
	}
	in.Policy = &install.Policy{RequireSignature: true}
	os.RemoveAll(filepath.Join(in.Dir, "pdf"))
	if _, err := in.Sync(ctx); err != nil {
		t.Fatalf("putting back an entry approved unsigned: %v", err)
	}
	in2 := newInstaller(t)
	in2.Client, in2.Policy = srv.Client(), &install.Policy{RequireSignature: false, Trust: &sign.Trust{}}
	if _, err := in2.Install(ctx, install.Request{Source: url}); err != nil {
		t.Fatalf("a policy that requires no signature: %v", err)
	}

	signer := newSigner(t)
	file := skillArchive(t, "pdf", "y")
	signer.signFile(t, file)
	in3 := newInstaller(t)
	in3.Policy = &install.Policy{RequireSignature: true}
	if _, err := in3.Install(ctx, install.Request{Source: file}); !errors.Is(err, sign.ErrUntrusted) {
		t.Fatalf("a signature under a policy with no Trust: %v", err)
	}
}

// Every way a reference reads, with what it reads as or why it is
// refused: the source kinds do not fall into one another.
func TestSourceReadings(t *testing.T) {
	t.Chdir(t.TempDir()) // no local folder shadows a shorthand
	for _, c := range []struct {
		in, kind, ref, rev, sub, err string
	}{
		{in: "owner", err: "no such folder"},
		{in: "a/b c", err: "no such folder"},
		{in: "a/../b", err: "no such folder"},
		{in: "owner/repo@v1:x", err: "no such folder"},
		{in: "@v1", err: "no such folder"},
		{in: "owner/repo@bad..rev", err: "is not a tag"},
		{in: "owner/repo@-x", err: "is not a tag"},
		{in: "owner/repo@v1", kind: install.KindGit, ref: "https://github.com/owner/repo.git", rev: "v1"},
		{in: "git.example.org/team/repo.git/sub", kind: install.KindGit, ref: "https://git.example.org/team/repo.git", sub: "sub"},
		{in: "gitlab.com/team/repo/sub", kind: install.KindGit, ref: "https://gitlab.com/team/repo.git", sub: "sub"},
		{in: "git.example.org/team/repo", err: "no such folder"},
		{in: "https://github.com/owner", err: "owner/repo"},
		{in: "https://git.example/a.git?x=1", err: "no user, query or fragment"},
		{in: "https://git.example/a.git#x", err: "no user, query or fragment"},
		{in: "https://u@git.example/a.git", err: "user"},
		{in: "https://u:p@github.com/a/b", err: "user"},
		{in: "git+https:///a.git", err: "names its host"},
		{in: "file://host/srv/repo.git", err: "on this machine"},
		{in: "file:///", err: "on this machine"},
		{in: "file://localhost/srv/x.git", kind: install.KindGit, ref: "file://localhost/srv/x.git"},
		{in: "https://github.com/a/b/blob/main/x", kind: install.KindGit, ref: "https://github.com/a/b.git", rev: "main", sub: "x"},
		{in: "https://github.com/a/b/tree/main", kind: install.KindGit, ref: "https://github.com/a/b.git", rev: "main"},
		{in: "https://github.com/a/b/other/x", kind: install.KindGit, ref: "https://github.com/a/b.git", sub: "other/x"},
		{in: "https://git.example/a/b.git/x/../../y", err: "not a clean relative path"},
		{in: "https://git.example/team/repo.git", kind: install.KindGit, ref: "https://git.example/team/repo.git"},
		{in: "https://github.com/a/b/releases/download/v1/x.tar.gz", kind: install.KindURL},
		{in: "https://git.example/team/repo", kind: install.KindWellKnown},
		{in: "oci://registry.example/a/b", kind: install.KindOCI, ref: "registry.example/a/b:latest"},
		{in: "ftp://x.example/a.tar.gz", err: "scheme"},
		{in: "http://x.example/a.tar.gz", err: "plain http"},
		{in: "https://x.example/site#frag", err: "fragment"},
		{in: "https://x.example/site#sha256=" + strings.Repeat("ab", 32), err: "pins an archive"},
		{in: "", err: "empty"},
	} {
		s, err := install.ParseSource(c.in)
		switch {
		case c.err != "":
			if err == nil || !errors.Is(err, install.ErrBadSource) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %+v, %v; want an error saying %q", c.in, s, err, c.err)
			}
		case err != nil:
			t.Errorf("%q: %v", c.in, err)
		case s.Kind != c.kind || (c.ref != "" && s.Ref != c.ref) || s.Rev != c.rev || s.Subpath != c.sub:
			t.Errorf("%q: %+v; want kind %s ref %s rev %q sub %q", c.in, s, c.kind, c.ref, c.rev, c.sub)
		}
	}
}

func TestBeyondEdges(t *testing.T) {
	approved := install.Capabilities{Paths: []string{"/ro:ro", "/rw:rw"}, Ceilings: install.Ceilings{Timeout: "2s", MaxFuel: 100, MaxWrite: 100, MaxHTTP: 100}}
	for _, c := range []struct {
		asks install.Capabilities
		want int
	}{
		{install.Capabilities{Paths: []string{"/ro:ro", "/rw:ro", "/rw:rw"}}, 0},
		{install.Capabilities{Paths: []string{"/ro:rw"}}, 1},
		{install.Capabilities{Paths: []string{"/other:ro"}}, 1},
		{install.Capabilities{Ceilings: install.Ceilings{Timeout: "2s", MaxFuel: 100, MaxWrite: 100, MaxHTTP: 100}}, 0},
		{install.Capabilities{Ceilings: install.Ceilings{MaxFuel: 101}}, 1},
		{install.Capabilities{Ceilings: install.Ceilings{MaxWrite: 101}}, 1},
		{install.Capabilities{Ceilings: install.Ceilings{MaxHTTP: 101}}, 1},
	} {
		if got := c.asks.Beyond(approved); len(got) != c.want {
			t.Errorf("%+v: %q, want %d", c.asks, got, c.want)
		}
	}
	// Nothing approved: any limit is more.
	if got := (install.Capabilities{Ceilings: install.Ceilings{Timeout: "1s", MaxWrite: 1}}).Beyond(install.Capabilities{}); len(got) != 2 {
		t.Errorf("limits over no approval: %q", got)
	}
}

// Limits are inclusive: a file of exactly MaxFileBytes, archives of
// exactly MaxFiles entries and MaxBytes bytes unpack.
func TestLimitsAreInclusive(t *testing.T) {
	exact := strings.Repeat("e", 4096)
	lim := install.ArchiveLimits{MaxFiles: 2, MaxFileBytes: 4096, MaxBytes: 8192}
	for format, make := range map[string]func(testing.TB, ...entry) []byte{"tar.gz": tarGz, "zip": zipOf} {
		if _, u, err := unpack(t, make(t, entry{name: "a", body: exact}, entry{name: "b", body: exact}), lim); err != nil || u.Bytes != 8192 {
			t.Errorf("%s at the limits: %+v, %v", format, u, err)
		}
		if _, _, err := unpack(t, make(t, entry{name: "a", body: exact + "x"}), lim); !errors.Is(err, install.ErrTooLarge) {
			t.Errorf("%s one byte over: %v", format, err)
		}
	}
	// A symbolic link in a zip is named as one.
	_, _, err := unpack(t, zipOf(t, entry{name: "l", typ: '2', link: "/etc/passwd"}), install.ArchiveLimits{})
	var ee *install.EntryError
	if !errors.As(err, &ee) || !strings.Contains(ee.Why, "symbolic link") {
		t.Errorf("a zip symlink: %v", err)
	}
}
