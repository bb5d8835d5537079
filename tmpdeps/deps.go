package tmpdeps

import (
	_ "github.com/expr-lang/expr"
	_ "github.com/go-co-op/gocron/v2"
	_ "github.com/gorilla/websocket"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/jonboulle/clockwork"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/robfig/cron/v3"
	_ "github.com/sethvargo/go-envconfig"
	_ "github.com/slack-go/slack"
	_ "github.com/slack-go/slack/socketmode"
	_ "gopkg.in/yaml.v3"
	_ "modernc.org/sqlite"
)
