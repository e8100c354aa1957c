package i18n

import (
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"text/template/parse"
	"unicode"
)

// TemplateReport is what CheckTemplate finds in a template's source.
type TemplateReport struct {
	// Literal is text a person would read that the template writes as is
	// instead of through the catalog: text between tags, and the values
	// of the attributes read out or shown (aria-label, title, alt,
	// placeholder).
	Literal []string
	// Keys are the message IDs the template passes to t (and tn).
	Keys []string
}

// CheckTemplate parses the source of an html/template or text/template
// file and reports its literal text and the message keys it uses. html
// says whether the source is HTML (tags and their attributes are then
// told apart from text).
func CheckTemplate(name, src string, html bool) (TemplateReport, error) {
	tr := parse.New(name)
	tr.Mode = parse.SkipFuncCheck
	trees := map[string]*parse.Tree{}
	if _, err := tr.Parse(src, "{{", "}}", trees); err != nil {
		return TemplateReport{}, err
	}
	var rep TemplateReport
	for _, t := range trees {
		if t.Root == nil {
			continue
		}
		var flat strings.Builder
		walk(t.Root, &flat, &rep)
		if html {
			rep.Literal = append(rep.Literal, htmlLiterals(flat.String())...)
		} else if s := strings.TrimSpace(stripMarks(flat.String())); hasLetter(s) {
			rep.Literal = append(rep.Literal, s)
		}
	}
	return rep, nil
}

// walk writes the template's text to flat, with a NUL for each action,
// and collects the keys of t and tn calls.
func walk(n parse.Node, flat *strings.Builder, rep *TemplateReport) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walk(c, flat, rep)
		}
	case *parse.TextNode:
		flat.Write(n.Text)
	case *parse.ActionNode:
		flat.WriteByte(0)
		pipeKeys(n.Pipe, rep)
	case *parse.IfNode:
		branch(&n.BranchNode, flat, rep)
	case *parse.RangeNode:
		branch(&n.BranchNode, flat, rep)
	case *parse.WithNode:
		branch(&n.BranchNode, flat, rep)
	case *parse.TemplateNode:
		flat.WriteByte(0)
		pipeKeys(n.Pipe, rep)
	}
}

func branch(b *parse.BranchNode, flat *strings.Builder, rep *TemplateReport) {
	flat.WriteByte(0)
	pipeKeys(b.Pipe, rep)
	walk(b.List, flat, rep)
	if b.ElseList != nil {
		walk(b.ElseList, flat, rep)
	}
}

func pipeKeys(p *parse.PipeNode, rep *TemplateReport) {
	if p == nil {
		return
	}
	for _, c := range p.Cmds {
		for i, a := range c.Args {
			switch a := a.(type) {
			case *parse.IdentifierNode:
				if (a.Ident == "t" || a.Ident == "tn") && i+1 < len(c.Args) {
					if s, ok := c.Args[i+1].(*parse.StringNode); ok {
						rep.Keys = append(rep.Keys, s.Text)
					}
				}
			case *parse.PipeNode:
				pipeKeys(a, rep)
			}
		}
	}
}

var (
	entityRE = regexp.MustCompile(`&[a-zA-Z]+;|&#[0-9]+;|&#x[0-9a-fA-F]+;`)
	attrRE   = regexp.MustCompile(`(?i)\s(aria-label|title|alt|placeholder|data-label)\s*=\s*"([^"]*)"`)
)

// readable attributes of a tag whose values people read.
func htmlLiterals(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '<')
		text := s
		if i >= 0 {
			text = s[:i]
		}
		if t := strings.TrimSpace(stripMarks(text)); hasLetter(t) {
			out = append(out, t)
		}
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			break
		}
		tag := s[i : i+j+1]
		for _, m := range attrRE.FindAllStringSubmatch(tag, -1) {
			if v := stripMarks(m[2]); hasLetter(v) {
				out = append(out, m[1]+"="+m[2])
			}
		}
		s = s[i+j+1:]
	}
	return out
}

func stripMarks(s string) string {
	return strings.ReplaceAll(entityRE.ReplaceAllString(s, " "), "\x00", " ")
}

func hasLetter(s string) bool {
	return strings.IndexFunc(s, unicode.IsLetter) >= 0
}

// CheckFiles runs CheckTemplate on every file of fsys matching pattern
// (HTML unless the name ends in .txt) and returns one line per problem:
// literal text, or a key missing from the English catalog (the catalog
// tests then hold the other languages to English). files is how many
// files it checked, so a test can tell a wrong pattern from a clean set.
func CheckFiles(fsys fs.FS, pattern string) (problems []string, files int, err error) {
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, 0, err
	}
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, 0, err
		}
		rep, err := CheckTemplate(n, string(b), !strings.HasSuffix(n, ".txt"))
		if err != nil {
			return nil, 0, err
		}
		for _, l := range rep.Literal {
			problems = append(problems, fmt.Sprintf("%s: untranslated text %q", n, l))
		}
		for _, k := range rep.Keys {
			if !Has(Default, k) {
				problems = append(problems, fmt.Sprintf("%s: key %q is not in the catalogs", n, k))
			}
		}
	}
	return problems, len(names), nil
}
