package oauthtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html"
)

// Browser is a cookie-keeping HTTP client that does not follow redirects by
// itself.
type Browser struct {
	Client *http.Client
}

// NewBrowser returns a Browser whose connections all go to addr (the
// server's listener), whatever the URL's host, so that every site origin of
// one server is reachable with its own Host header.
func NewBrowser(addr string) *Browser {
	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &Browser{Client: &http.Client{
		Jar:     jar,
		Timeout: 30 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Page is a fetched page.
type Page struct {
	URL    *url.URL
	Status int
	Header http.Header
	Body   string
}

// Get fetches u.
func (b *Browser) Get(u string) (*Page, error) {
	resp, err := b.Client.Get(u)
	if err != nil {
		return nil, err
	}
	return read(resp)
}

// PostForm submits values to u.
func (b *Browser) PostForm(u string, values url.Values) (*Page, error) {
	resp, err := b.Client.PostForm(u, values)
	if err != nil {
		return nil, err
	}
	return read(resp)
}

func read(resp *http.Response) (*Page, error) {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	return &Page{URL: resp.Request.URL, Status: resp.StatusCode, Header: resp.Header, Body: string(body)}, nil
}

// Outcome is where an authorization ended.
type Outcome struct {
	// Redirect is the client's redirect URI with the response parameters,
	// when the server sent the browser back to the client.
	Redirect *url.URL
	// Page is the last page shown on the server (an error or refusal page)
	// when it did not.
	Page *Page
}

// Code returns the code of a successful redirect, or an error describing
// what happened instead.
func (o *Outcome) Code() (string, error) {
	if o.Redirect == nil {
		return "", fmt.Errorf("no redirect to the client; the server showed %d: %s", o.Page.Status, excerpt(o.Page.Body))
	}
	q := o.Redirect.Query()
	if e := q.Get("error"); e != "" {
		return "", fmt.Errorf("authorization error %s: %s", e, q.Get("error_description"))
	}
	if q.Get("code") == "" {
		return "", fmt.Errorf("redirect without code: %s", o.Redirect)
	}
	return q.Get("code"), nil
}

// Options say how the person answers.
type Options struct {
	Email, Password string
	// Decision is "approve" (default) or "deny" on the consent page.
	Decision string
	// FollowRefusal follows the refusal page's "Return to" link.
	FollowRefusal bool
	// Code answers the second-factor step (a TOTP or recovery code); nil
	// stops there.
	Code func() string
}

// Authorize opens authURL and plays the person: it signs in when the login
// form appears, answers the consent form, and returns when the server
// redirects to another origin (the client) or shows a page without one of
// those forms.
func (b *Browser) Authorize(authURL string, o Options) (*Outcome, error) {
	if o.Decision == "" {
		o.Decision = "approve"
	}
	start, err := url.Parse(authURL)
	if err != nil {
		return nil, err
	}
	page, err := b.Get(authURL)
	for step := 0; step < 20; step++ {
		if err != nil {
			return nil, err
		}
		if page.Status >= 300 && page.Status < 400 {
			var loc *url.URL
			if loc, err = page.URL.Parse(page.Header.Get("Location")); err != nil {
				return nil, err
			}
			if loc.Scheme+"://"+loc.Host != start.Scheme+"://"+start.Host {
				return &Outcome{Redirect: loc}, nil
			}
			page, err = b.Get(loc.String())
			continue
		}
		switch {
		case hasForm(page.Body, "login-form"):
			f, err := ParseForm(page.Body, "login-form")
			if err != nil {
				return nil, err
			}
			if o.Email == "" {
				return &Outcome{Page: page}, nil
			}
			f.Values.Set("email", o.Email)
			f.Values.Set("password", o.Password)
			page, err = b.submit(page, f, "")
			if err != nil {
				return nil, err
			}
			if page.Status == http.StatusOK || page.Status == http.StatusUnauthorized || page.Status == http.StatusTooManyRequests {
				if hasForm(page.Body, "login-form") {
					return &Outcome{Page: page}, nil // sign-in refused
				}
			}
		case hasForm(page.Body, "factor-form"):
			f, err := ParseForm(page.Body, "factor-form")
			if err != nil {
				return nil, err
			}
			if o.Code == nil {
				return &Outcome{Page: page}, nil
			}
			f.Values.Set("code", o.Code())
			page, err = b.submit(page, f, "")
			if err != nil {
				return nil, err
			}
			if page.Status != http.StatusSeeOther && page.Status != http.StatusFound {
				return &Outcome{Page: page}, nil // code refused
			}
		case hasForm(page.Body, "consent-form"):
			var f *Form
			if f, err = ParseForm(page.Body, "consent-form"); err != nil {
				return nil, err
			}
			page, err = b.submit(page, f, o.Decision)
		case o.FollowRefusal && strings.Contains(page.Body, `id="return-to-client"`):
			href, err := linkByID(page.Body, "return-to-client")
			if err != nil {
				return nil, err
			}
			loc, err := page.URL.Parse(href)
			if err != nil {
				return nil, err
			}
			return &Outcome{Redirect: loc}, nil
		default:
			return &Outcome{Page: page}, nil
		}
	}
	return nil, errors.New("oauthtest: too many steps")
}

// submit posts form f from page, with decision as the pressed button's
// value when non-empty.
func (b *Browser) submit(page *Page, f *Form, decision string) (*Page, error) {
	action, err := page.URL.Parse(f.Action)
	if err != nil {
		return nil, err
	}
	v := url.Values{}
	for k, vs := range f.Values {
		v[k] = append([]string(nil), vs...)
	}
	if decision != "" {
		v.Set("decision", decision)
	}
	return b.PostForm(action.String(), v)
}

// Form is a parsed HTML form.
type Form struct {
	Action, Method string
	// Values are what a browser submits for the form's inputs as they
	// stand (not buttons): a checkbox or radio button only when checked, no
	// disabled input.
	Values url.Values
	// Buttons are the submit buttons' name=value pairs.
	Buttons []string
}

// ParseForm finds the form with id in body. Its Values are those a
// browser would submit untouched (HTML, "constructing the entry list"):
// submitting every checkbox would switch on each option the page offers.
func ParseForm(body, id string) (*Form, error) {
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	node := findByID(doc, id)
	if node == nil || node.Data != "form" {
		return nil, fmt.Errorf("no form %q on the page: %s", id, excerpt(body))
	}
	f := &Form{Action: attr(node, "action"), Method: strings.ToUpper(attr(node, "method")), Values: url.Values{}}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "input":
				if name := attr(n, "name"); name != "" && submitted(n) {
					f.Values.Add(name, inputValue(n))
				}
			case "button":
				if attr(n, "type") == "submit" || attr(n, "type") == "" {
					f.Buttons = append(f.Buttons, attr(n, "name")+"="+attr(n, "value"))
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(node)
	return f, nil
}

// submitted reports whether a browser submits input n with its form.
func submitted(n *html.Node) bool {
	if hasAttr(n, "disabled") {
		return false
	}
	switch strings.ToLower(attr(n, "type")) {
	case "submit", "image", "reset", "button", "file":
		return false
	case "checkbox", "radio":
		return hasAttr(n, "checked")
	}
	return true
}

// inputValue is what input n submits: a checkbox or radio button without
// a value submits "on".
func inputValue(n *html.Node) string {
	switch t := strings.ToLower(attr(n, "type")); {
	case (t == "checkbox" || t == "radio") && !hasAttr(n, "value"):
		return "on"
	}
	return attr(n, "value")
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

func hasForm(body, id string) bool { return strings.Contains(body, `id="`+id+`"`) }

func linkByID(body, id string) (string, error) {
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		return "", err
	}
	n := findByID(doc, id)
	if n == nil {
		return "", fmt.Errorf("no element %q", id)
	}
	return attr(n, "href"), nil
}

func findByID(n *html.Node, id string) *html.Node {
	if n.Type == html.ElementNode && attr(n, "id") == id {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findByID(c, id); f != nil {
			return f
		}
	}
	return nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func excerpt(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}
