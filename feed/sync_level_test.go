package feed

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
)

// A cycle incomplete only because the first full sync is under way (every
// first start) is logged at info; any other cause at warn.
func TestIncompleteLevel(t *testing.T) {
	first := fmt.Errorf("the default workspace: %w", ErrFirstSync)
	other := errors.New("the default workspace: change feed: 503")
	for _, c := range []struct {
		err  error
		want slog.Level
	}{
		{first, slog.LevelInfo},
		{errors.Join(first, fmt.Errorf("the workspace 2: %w", ErrFirstSync)), slog.LevelInfo},
		{errors.Join(first, other), slog.LevelWarn},
		{fmt.Errorf("sync: %w", errors.Join(first, other)), slog.LevelWarn},
		{other, slog.LevelWarn},
	} {
		if got := IncompleteLevel(c.err); got != c.want {
			t.Errorf("IncompleteLevel(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
