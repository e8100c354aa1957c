package memberapi

import (
	"encoding/base64"
	"net/url"
	"strings"

	"github.com/lectern/lectern/storage"
)

// A notification setting has no ID: its keyset position is its key
// (topic, channel), so its cursor carries both, query-escaped so that a
// separator inside either cannot be confused with the one between them.

// maxSubscriptionCursor bounds what decodeSubscriptionCursor reads: a
// topic of 64 and a channel of 32 bytes, each escaped at most threefold.
const maxSubscriptionCursor = 512

func encodeSubscriptionCursor(s *storage.NotificationSubscription) string {
	raw := kindSubscription + ":" + url.QueryEscape(s.Topic) + ":" + url.QueryEscape(s.Channel)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// decodeSubscriptionCursor returns the (topic, channel) a cursor names.
// Anything but a cursor encodeSubscriptionCursor made (another
// connection's, a non-canonical escape, an empty topic) is refused.
func decodeSubscriptionCursor(cursor string) (topic, channel string, ok bool) {
	if len(cursor) == 0 || len(cursor) > maxSubscriptionCursor {
		return "", "", false
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil {
		return "", "", false
	}
	parts := strings.Split(string(raw), ":")
	if len(parts) != 3 || parts[0] != kindSubscription {
		return "", "", false
	}
	topic, err1 := url.QueryUnescape(parts[1])
	channel, err2 := url.QueryUnescape(parts[2])
	if err1 != nil || err2 != nil || topic == "" ||
		url.QueryEscape(topic) != parts[1] || url.QueryEscape(channel) != parts[2] {
		return "", "", false
	}
	return topic, channel, true
}

// subscriptionPage turns the connection's arguments into the store's page,
// one row more than first (see pageArgs.page).
func (a pageArgs) subscriptionPage() (storage.SubscriptionPage, int, error) {
	first, err := a.first()
	if err != nil {
		return storage.SubscriptionPage{}, 0, err
	}
	p := storage.SubscriptionPage{Limit: first + 1}
	if a.After != nil {
		topic, channel, ok := decodeSubscriptionCursor(*a.After)
		if !ok {
			return storage.SubscriptionPage{}, 0, badInput("after is not a cursor of this connection")
		}
		p.AfterTopic, p.AfterChannel = topic, channel
	}
	return p, first, nil
}
