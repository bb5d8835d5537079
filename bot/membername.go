package bot

import (
	"context"

	"github.com/deskbot/deskbot/bot/chat"
)

// MemberName names an on-call schedule member (a chat user id or an
// e-mail) as /oncall's text answer does: the desk agent's name, else the
// e-mail, else "Slack user ID". dir resolves chat user ids to e-mails
// (nil: it is not asked). The status pages name members with it, from the
// router's caches while they are fresh.
func (r *Router) MemberName(ctx context.Context, dir chat.Directory, member string) string {
	return r.memberName(ctx, chat.Caller{Users: dir}, member)
}
