package oauthtest

import (
	"net/url"
	"reflect"
	"testing"
)

// TestParseFormSubmitsWhatABrowserWould: an unchecked checkbox or radio
// button and a disabled input are not submitted; a checked one is. (The
// fault driver saved the Settings form through ParseForm and so switched
// on "staff must use a second factor", which then locked the owner out of
// the admin area on every replica.)
func TestParseFormSubmitsWhatABrowserWould(t *testing.T) {
	body := `<html><body><form id="f" method="post" action="/save">
<input type="hidden" name="csrf_token" value="tok">
<input type="checkbox" name="signup" value="on" checked>
<input type="checkbox" name="staff_mfa" value="on">
<input type="checkbox" name="bare" checked>
<input type="radio" name="type" value="public">
<input type="radio" name="type" value="confidential" checked>
<input type="text" name="mail_from_name" value="Demo">
<input type="number" name="limit_x" value="3" disabled>
<input type="submit" name="go" value="Save">
<button type="submit" name="b" value="1">Save</button>
</form></body></html>`
	f, err := ParseForm(body, "f")
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{
		"csrf_token":     {"tok"},
		"signup":         {"on"},
		"bare":           {"on"},
		"type":           {"confidential"},
		"mail_from_name": {"Demo"},
	}
	if !reflect.DeepEqual(f.Values, want) {
		t.Errorf("Values = %v, want %v", f.Values, want)
	}
	if f.Action != "/save" || f.Method != "POST" || !reflect.DeepEqual(f.Buttons, []string{"b=1"}) {
		t.Errorf("Action %q Method %q Buttons %v", f.Action, f.Method, f.Buttons)
	}
}
