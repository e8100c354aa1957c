package memberapi

import (
	"context"
	"errors"
	"slices"
	"strconv"

	graphql "github.com/graph-gophers/graphql-go"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/storage"
)

// Topics and channels a member may subscribe to without having a setting
// for them yet. Settings the member already has (whatever created them) may
// always be changed.
var (
	knownTopics   = []string{"announcements", "course_updates", "event_reminders"}
	knownChannels = []string{"email", "push"}
)

const notificationNotFound = "no notification with this id"

type notificationsArgs struct {
	First *int32
	After *string
	// UnreadOnly is nullable in the schema (Boolean = false): null, or a
	// variable left out, means false.
	UnreadOnly graphql.NullBool
}

// Notifications implements Query.notifications: newest first, so the
// cursor's ID is an upper bound (storage.MemberStore.ListNotifications).
func (resolver) Notifications(ctx context.Context, args notificationsArgs) (*connection[*notificationResolver], error) {
	rq := requestFrom(ctx)
	if err := rq.need(scope.AccountRead); err != nil {
		return nil, err
	}
	p, first, err := pageArgs{args.First, args.After}.page(kindNotification)
	if err != nil {
		return nil, err
	}
	rows, total, err := rq.store.ListNotifications(ctx, rq.site.ID, rq.userID(), p, args.UnreadOnly.Value != nil && *args.UnreadOnly.Value)
	if err != nil {
		return nil, storeError(err, "")
	}
	return newConnection(kindNotification, rows, total, first,
		func(n *storage.Notification) int64 { return n.ID },
		func(n *storage.Notification) *notificationResolver { return &notificationResolver{n: n} }), nil
}

// UnreadNotificationCount implements Query.unreadNotificationCount.
func (resolver) UnreadNotificationCount(ctx context.Context) (int32, error) {
	rq := requestFrom(ctx)
	if err := rq.need(scope.AccountRead); err != nil {
		return 0, err
	}
	n, err := rq.store.UnreadNotificationCount(ctx, rq.site.ID, rq.userID())
	if err != nil {
		return 0, storeError(err, "")
	}
	return clampInt32(n), nil
}

// NotificationSubscriptions implements Query.notificationSubscriptions: a
// connection in topic, channel order.
func (resolver) NotificationSubscriptions(ctx context.Context, args pageArgs) (*connection[*subscriptionResolver], error) {
	rq := requestFrom(ctx)
	if err := rq.need(scope.AccountRead); err != nil {
		return nil, err
	}
	p, first, err := args.subscriptionPage()
	if err != nil {
		return nil, err
	}
	rows, total, err := rq.store.ListNotificationSubscriptions(ctx, rq.site.ID, rq.userID(), p)
	if err != nil {
		return nil, storeError(err, "")
	}
	return newConnectionBy(rows, total, first, encodeSubscriptionCursor,
		func(s *storage.NotificationSubscription) *subscriptionResolver { return &subscriptionResolver{s} }), nil
}

// MarkNotificationRead implements Mutation.markNotificationRead. The store
// matches the ID together with the site and the member, so another member's
// notification, or the member's own at another site, is NOT_FOUND, the same
// answer as an ID that does not exist.
func (resolver) MarkNotificationRead(ctx context.Context, args struct{ ID graphql.ID }) (*notificationResolver, error) {
	rq := requestFrom(ctx)
	if err := rq.need(scope.AccountWrite); err != nil {
		return nil, err
	}
	id, err := strconv.ParseInt(string(args.ID), 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != string(args.ID) {
		// Only the canonical form names a notification ("3", not "03"
		// or "+3"): an ID is an opaque string, compared as given.
		return nil, notFound(notificationNotFound)
	}
	n, err := rq.store.MarkNotificationRead(ctx, rq.site.ID, rq.userID(), id, rq.now())
	if err != nil {
		return nil, storeError(err, notificationNotFound)
	}
	// The answer is read access: the handler refuses a selection beyond
	// id to a token without account:read before anything runs, and the
	// fields refuse it again here.
	return &notificationResolver{n: n, unreadable: rq.need(scope.AccountRead)}, nil
}

// MarkAllNotificationsRead implements Mutation.markAllNotificationsRead.
func (resolver) MarkAllNotificationsRead(ctx context.Context) (int32, error) {
	rq := requestFrom(ctx)
	if err := rq.need(scope.AccountWrite); err != nil {
		return 0, err
	}
	n, err := rq.store.MarkAllNotificationsRead(ctx, rq.site.ID, rq.userID(), rq.now())
	if err != nil {
		return 0, storeError(err, "")
	}
	return clampInt32(n), nil
}

type subscriptionArgs struct {
	Topic   string
	Channel string
	Enabled bool
}

// UpdateNotificationSubscription implements
// Mutation.updateNotificationSubscription.
func (resolver) UpdateNotificationSubscription(ctx context.Context, args subscriptionArgs) (*subscriptionResolver, error) {
	rq := requestFrom(ctx)
	if err := rq.need(scope.AccountWrite); err != nil {
		return nil, err
	}
	if !validName(args.Topic, 64) || !validName(args.Channel, 32) {
		return nil, badInput("topic and channel are lower-case names (a-z, 0-9, _)")
	}
	if !slices.Contains(knownTopics, args.Topic) || !slices.Contains(knownChannels, args.Channel) {
		// Not a known pair: allowed only if the member has this setting.
		_, err := rq.store.NotificationSubscription(ctx, rq.site.ID, rq.userID(), args.Topic, args.Channel)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, badInput("unknown topic or channel; topics: %v, channels: %v", knownTopics, knownChannels)
		}
		if err != nil {
			return nil, storeError(err, "")
		}
	}
	sub := &storage.NotificationSubscription{
		SiteID: rq.site.ID, UserID: rq.userID(), Topic: args.Topic, Channel: args.Channel, Enabled: args.Enabled,
	}
	if err := rq.store.SetNotificationSubscription(ctx, sub); err != nil {
		return nil, storeError(err, "")
	}
	return &subscriptionResolver{sub}, nil
}

// validName reports whether s is a non-empty lower-case identifier of at
// most maxLen bytes (the column sizes of topic and channel).
func validName(s string, maxLen int) bool {
	if s == "" || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// notificationResolver is a notification. unreadable is set when a mutation
// returns it to a token that may mark notifications but not read them:
// every field but the id then fails.
type notificationResolver struct {
	n          *storage.Notification
	unreadable error
}

func (r *notificationResolver) ID() graphql.ID         { return int64ID(r.n.ID) }
func (r *notificationResolver) Kind() (string, error)  { return r.n.Kind, r.unreadable }
func (r *notificationResolver) Title() (string, error) { return r.n.Title, r.unreadable }
func (r *notificationResolver) Body() (string, error)  { return r.n.Body, r.unreadable }
func (r *notificationResolver) URL() (string, error)   { return r.n.URL, r.unreadable }
func (r *notificationResolver) CreatedAt() (DateTime, error) {
	return dateTime(r.n.CreatedAt), r.unreadable
}
func (r *notificationResolver) ReadAt() (*DateTime, error) {
	return optDateTime(r.n.ReadAt), r.unreadable
}

type subscriptionResolver struct {
	s *storage.NotificationSubscription
}

func (r *subscriptionResolver) Topic() string   { return r.s.Topic }
func (r *subscriptionResolver) Channel() string { return r.s.Channel }
func (r *subscriptionResolver) Enabled() bool   { return r.s.Enabled }
