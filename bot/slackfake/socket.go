package slackfake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

const (
	websocketGoingAway = websocket.CloseGoingAway
	websocketNormal    = websocket.CloseNormalClosure
	writeTimeout       = 5 * time.Second
)

// upgrader accepts any Origin: slack-go dials with Origin https://api.slack.com.
var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// wsConn is one socket-mode connection.
type wsConn struct {
	ws        *websocket.Conn
	writeMu   sync.Mutex // serialises data frames
	done      chan struct{}
	closeOnce sync.Once
}

// writeJSON sends one text frame.
func (c *wsConn) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.writeRaw(b)
}

// writeRaw sends one text frame as given.
func (c *wsConn) writeRaw(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.done:
		return errConnClosed
	default:
	}
	_ = c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

// writeFrame sends one text frame on a socket whose write lock the caller
// holds.
func writeFrame(ws *websocket.Conn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_ = ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	return ws.WriteMessage(websocket.TextMessage, b)
}

// errConnClosed reports a write on a connection already closed by the fake.
var errConnClosed = errors.New("slackfake: websocket closed")

// close sends a close frame and closes the socket; safe to call twice.
func (c *wsConn) close(code int) {
	c.closeOnce.Do(func() {
		c.writeMu.Lock()
		close(c.done)
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(time.Second))
		c.writeMu.Unlock()
		_ = c.ws.Close()
	})
}

func (s *Server) serveWebsocket(w http.ResponseWriter, req *http.Request) {
	ticket := req.URL.Query().Get("ticket")
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "closed", http.StatusServiceUnavailable)
		return
	}
	if !s.tickets[ticket] {
		s.mu.Unlock()
		http.Error(w, "invalid or used ticket", http.StatusUnauthorized)
		return
	}
	delete(s.tickets, ticket)
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	ws, err := upgrader.Upgrade(w, req, nil)
	if err != nil {
		return // Upgrade has answered the client
	}
	c := &wsConn{ws: ws, done: make(chan struct{})}
	// Register the connection before its hello is written, holding the
	// write lock: a client that saw hello can be disconnected at once
	// (Disconnect must find the connection), and no envelope can overtake
	// the hello.
	c.writeMu.Lock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.writeMu.Unlock()
		c.close(websocketGoingAway)
		return
	}
	s.conns = append(s.conns, c)
	s.connsOpened++
	n := len(s.conns)
	s.mu.Unlock()
	hello := map[string]any{
		"type":            "hello",
		"num_connections": n,
		"debug_info":      map[string]any{"host": "slackfake", "build_number": 1, "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": s.cfg.appID},
	}
	err = writeFrame(ws, hello)
	c.writeMu.Unlock()
	if err != nil {
		c.close(websocketGoingAway)
		s.removeConn(c)
		return
	}
	s.mu.Lock()
	s.notifyLocked()
	s.mu.Unlock()

	s.wg.Go(func() { s.ping(c) })
	s.readAcks(c)
	c.close(websocketGoingAway)
	s.removeConn(c)
}

// ping sends websocket pings until the connection closes, as Slack does;
// slack-go reconnects when it sees none for its ping interval.
func (s *Server) ping(c *wsConn) {
	t := time.NewTicker(s.cfg.pingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			if err := c.ws.WriteControl(websocket.PingMessage, []byte("slackfake"), time.Now().Add(writeTimeout)); err != nil {
				return
			}
		}
	}
}

// readAcks reads frames until the connection fails.
func (s *Server) readAcks(c *wsConn) {
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		var frame struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &frame) != nil || frame.EnvelopeID == "" {
			continue // Slack ignores frames that are not acks
		}
		now := time.Now()
		ack := Ack{EnvelopeID: frame.EnvelopeID, ReceivedAt: now, Size: len(data), Dropped: len(data) >= MaxAckSize}
		if len(frame.Payload) > 0 && string(frame.Payload) != "null" {
			ack.Payload = frame.Payload
		}
		s.mu.Lock()
		if sent, ok := s.delivered[frame.EnvelopeID]; ok {
			ack.Latency = now.Sub(sent)
		} else {
			ack.Unknown = true
		}
		s.ackLog = append(s.ackLog, ack)
		if !ack.Dropped {
			s.acks[ack.EnvelopeID] = append(s.acks[ack.EnvelopeID], ack)
		}
		s.notifyLocked()
		s.mu.Unlock()
	}
}

func (s *Server) removeConn(c *wsConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.conns, c); i >= 0 {
		s.conns = slices.Delete(s.conns, i, i+1)
		s.notifyLocked()
	}
}

// Connections is the number of open socket-mode connections.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// ConnectionsOpened is how many socket-mode connections were accepted in
// total, so a test can tell a reconnect happened.
func (s *Server) ConnectionsOpened() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connsOpened
}

// WaitConnected waits until at least n connections are open (each has
// been sent its hello, or is being sent it: nothing overtakes a hello).
func (s *Server) WaitConnected(ctx context.Context, n int) error {
	return s.waitFor(ctx, fmt.Sprintf("%d socket-mode connections", n), func() bool { return len(s.conns) >= n })
}

// Disconnect asks every connected client to reconnect, as Slack does
// before it recycles a connection: it sends
// {"type":"disconnect","reason":"refresh_requested"} and closes the socket.
func (s *Server) Disconnect() {
	s.DisconnectReason("refresh_requested")
}

// DisconnectReason is Disconnect with another reason ("warning", "link_disabled", ...).
func (s *Server) DisconnectReason(reason string) {
	s.mu.Lock()
	conns := slices.Clone(s.conns)
	s.conns = nil
	s.notifyLocked()
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.writeJSON(map[string]any{
			"type":       "disconnect",
			"reason":     reason,
			"debug_info": map[string]any{"host": "slackfake"},
		})
		c.close(websocketNormal)
	}
}

// deliver writes an envelope to one open connection (round robin), waiting
// for a connection if none is open.
func (s *Server) deliver(ctx context.Context, env *Envelope) error {
	frame := map[string]any{
		"envelope_id":              env.ID,
		"type":                     env.Type,
		"accepts_response_payload": env.AcceptsResponsePayload,
		"payload":                  env.Payload,
	}
	if env.RetryAttempt > 0 {
		frame["retry_attempt"] = env.RetryAttempt
		frame["retry_reason"] = env.RetryReason
	}
	b, err := json.Marshal(frame)
	if err != nil {
		// Checked before any connection is used: a frame that cannot be
		// written would otherwise be retried on every reconnect.
		return fmt.Errorf("deliver %s envelope: %w", env.Type, err)
	}
	return s.deliverFrame(ctx, env, b)
}

// deliverFrame writes one text frame, exactly as given, for env.
func (s *Server) deliverFrame(ctx context.Context, env *Envelope, frame []byte) error {
	for {
		var c *wsConn
		err := s.waitFor(ctx, "a socket-mode connection", func() bool {
			if len(s.conns) == 0 {
				return false
			}
			s.nextConn = (s.nextConn + 1) % len(s.conns)
			c = s.conns[s.nextConn]
			// Mark the time before writing so an ack cannot beat it.
			env.ackBase = len(s.acks[env.ID])
			env.SentAt = time.Now()
			s.delivered[env.ID] = env.SentAt
			return true
		})
		if err != nil {
			return fmt.Errorf("deliver %s envelope: %w", env.Type, err)
		}
		if err := c.writeRaw(frame); err != nil {
			c.close(websocketGoingAway)
			s.removeConn(c)
			continue
		}
		return nil
	}
}
