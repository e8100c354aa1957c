package vocab

import "strings"

// AvatarsPath is where every site serves account pictures:
// /avatars/{sub}.svg, the avatar generated from the person's initials, and
// /avatars/{sub}/{file}, the picture they uploaded (file is "<key>.png" or
// "<key>.jpg"; a new upload gets a new name, so the address of a picture
// never changes what it shows). A site answers only for people who hold a
// role there.
const AvatarsPath = "/avatars"

// PictureURL is the picture claim of a person at the site with origin
// (spec: UserInfo and id_token claims; DESIGN §10): the picture they
// uploaded, else a picture URL the provider set for them, else the
// generated avatar. Accounts are platform-wide, the address is the site's:
// each site serves the same picture at its own origin.
func PictureURL(origin, sub, uploaded, providerURL string) string {
	origin = strings.TrimSuffix(origin, "/")
	switch {
	case uploaded != "":
		return origin + AvatarsPath + "/" + sub + "/" + uploaded
	case providerURL != "":
		return providerURL
	default:
		return origin + AvatarsPath + "/" + sub + ".svg"
	}
}
