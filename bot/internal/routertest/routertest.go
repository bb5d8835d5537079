package routertest

import (
	"context"
	"log/slog"
	"testing"

	"github.com/deskbot/deskbot/bot"
	"github.com/deskbot/deskbot/bot/internal/chattest"
)

// Users are the chat users of the router-only tests.
func Users() chattest.Users {
	return chattest.Users{"UALICE": "alice@example.com", "UBOB": "bob@example.com", "UCAROL": "carol@example.com", "UOLGA": "olga@example.com", "UNOMAIL": ""}
}

// New is a router over d with ticket links to desk.example.com.
func New(t testing.TB, d bot.Desk, opts ...bot.Option) *bot.Router {
	t.Helper()
	opts = append([]bot.Option{bot.WithDeskURL("https://desk.example.com")}, opts...)
	r, err := bot.NewRouter(d, slog.New(slog.DiscardHandler), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Handle runs a typed command of user through r alone.
func Handle(r *bot.Router, user, cmd, text string) bot.Reply {
	return r.Dispatch(context.Background(), bot.Caller{UserID: user, TeamID: "T1", ChannelID: "C1", Users: Users()}, bot.Command{Slash: cmd, Text: text})
}
