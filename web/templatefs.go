package web

import (
	"bytes"
	"embed"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

//go:embed templates/*.html
var templateFiles embed.FS

// layoutFile holds what every page of this package shares: the navigation,
// the width of main, and partials (pager, form fields). ui.Renderer parses
// each page file on its own with the base layout, so shared definitions
// have to travel inside each page: pageFS prepends the layout file to every
// page.
const layoutFile = "templates/_layout.html"

// pageFS returns templates/<page>.html for every page file, each with the
// shared layout in front, as ui.NewRenderer reads them.
func pageFS() (fs.FS, error) {
	layout, err := templateFiles.ReadFile(layoutFile)
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	out := memFS{}
	for _, n := range names {
		if strings.HasPrefix(path.Base(n), "_") {
			continue
		}
		page, err := templateFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out[n] = append(append(slices.Clip(layout), '\n'), page...)
	}
	return out, nil
}

// memFS is a read-only file system of a few files in memory. It implements
// the interfaces template.ParseFS and fs.Glob use.
type memFS map[string][]byte

func (m memFS) Open(name string) (fs.File, error) {
	b, ok := m[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &memFile{info: memInfo{name: path.Base(name), size: int64(len(b))}, r: bytes.NewReader(b)}, nil
}

func (m memFS) ReadFile(name string) ([]byte, error) {
	b, ok := m[name]
	if !ok {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	return slices.Clone(b), nil
}

func (m memFS) Glob(pattern string) ([]string, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, err
	}
	var out []string
	for name := range m {
		if ok, _ := path.Match(pattern, name); ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

type memFile struct {
	info memInfo
	r    *bytes.Reader
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *memFile) Close() error               { return nil }

type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
