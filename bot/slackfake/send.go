package slackfake

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Envelope is one socket-mode delivery made by the fake.
type Envelope struct {
	ID                     string
	Type                   string // slash_commands, interactive, events_api
	Payload                json.RawMessage
	AcceptsResponsePayload bool
	RetryAttempt           int
	RetryReason            string
	TriggerID              string    // registered for views.open/views.push
	ResponseURL            string    // handed out with the payload, if any
	SentAt                 time.Time // when the frame was written

	s       *Server
	ackBase int // acks of this envelope id seen before this delivery
}

// WaitAck waits for the first ack of this delivery (same envelope id,
// received after it was sent) and returns it with the latency measured
// from this delivery. Acks Slack would drop (MaxAckSize or more) never
// count.
func (e *Envelope) WaitAck(ctx context.Context) (Ack, error) {
	var ack Ack
	err := e.s.waitFor(ctx, "ack of envelope "+e.ID, func() bool {
		acks := e.s.acks[e.ID]
		if len(acks) <= e.ackBase {
			return false
		}
		ack = acks[e.ackBase]
		ack.Latency = ack.ReceivedAt.Sub(e.SentAt)
		return true
	})
	return ack, err
}

// Send delivers an envelope of any type (slash_commands, interactive,
// events_api) with the given payload (marshalled to JSON unless it is a
// json.RawMessage) to one connection, waiting for a connection if none is
// open. Unlike the typed senders it registers no trigger or response URL.
func (s *Server) Send(ctx context.Context, typ string, payload any) (*Envelope, error) {
	raw, ok := payload.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(payload)
		if err != nil {
			return nil, fmt.Errorf("send %s envelope: marshal payload: %w", typ, err)
		}
		raw = b
	}
	env := &Envelope{ID: newEnvelopeID(), Type: typ, Payload: raw, s: s}
	var inner struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &inner)
	switch {
	case typ == "slash_commands":
		env.AcceptsResponsePayload = true
	case typ == "interactive" && (inner.Type == "view_submission" || inner.Type == "block_suggestion"):
		env.AcceptsResponsePayload = true
	}
	return env, s.deliver(ctx, env)
}

// SendRaw writes frame to one connection exactly as given, for envelopes a
// well-behaved Slack would not send: a payload that does not decode as
// its type says, a field of the wrong type, an unknown type. The frame's
// envelope_id, when it has a string one, names the returned Envelope so
// that WaitAck and AcksOf work.
func (s *Server) SendRaw(ctx context.Context, frame []byte) (*Envelope, error) {
	var head struct {
		ID   json.RawMessage `json:"envelope_id"`
		Type json.RawMessage `json:"type"`
	}
	_ = json.Unmarshal(frame, &head)
	env := &Envelope{Payload: nil, s: s}
	_ = json.Unmarshal(head.ID, &env.ID)
	_ = json.Unmarshal(head.Type, &env.Type)
	return env, s.deliverFrame(ctx, env, frame)
}

// NewEnvelopeID returns a fresh envelope id, as Slack makes them.
func NewEnvelopeID() string { return newEnvelopeID() }

// AcksOf returns the acks read for an envelope id (every delivery of it),
// in arrival order; acks Slack would drop (MaxAckSize or more) excluded.
func (s *Server) AcksOf(id string) []Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.acks[id])
}

// Redeliver sends the same envelope again with retry_attempt incremented
// and retry_reason "timeout", as Slack does when an ack is late.
func (s *Server) Redeliver(ctx context.Context, env *Envelope) (*Envelope, error) {
	again := *env
	again.RetryAttempt++
	again.RetryReason = "timeout"
	again.s = s
	return &again, s.deliver(ctx, &again)
}

// RetryEvent delivers the payload of env (an events_api envelope) again
// under a new envelope id, with retry_attempt one more than env's and
// retry_reason "timeout": Slack's retry of an event it saw no timely ack
// for. The event_id inside the payload stays the same; that is what a
// client must de-duplicate on.
func (s *Server) RetryEvent(ctx context.Context, env *Envelope) (*Envelope, error) {
	if env.Type != "events_api" {
		return nil, fmt.Errorf("retry event: envelope %s is %s, not events_api", env.ID, env.Type)
	}
	again := &Envelope{ID: newEnvelopeID(), Type: env.Type, Payload: env.Payload,
		RetryAttempt: env.RetryAttempt + 1, RetryReason: "timeout", s: s}
	return again, s.deliver(ctx, again)
}

// SlashCommand describes a slash command a user types. TeamID, UserName
// and ChannelName are filled from the fake's workspace when empty.
type SlashCommand struct {
	Command     string // e.g. "/ticket"
	Text        string
	UserID      string
	UserName    string
	ChannelID   string
	ChannelName string
	TeamID      string
	TeamDomain  string
}

// SlashCommand delivers a slash_commands envelope with a fresh trigger_id
// and response_url, the way Slack's socket mode does.
func (s *Server) SlashCommand(ctx context.Context, cmd SlashCommand) (*Envelope, error) {
	if !strings.HasPrefix(cmd.Command, "/") {
		return nil, fmt.Errorf("send slash command %q: command must start with \"/\"", cmd.Command)
	}
	s.mu.Lock()
	if cmd.TeamID == "" {
		cmd.TeamID = s.cfg.teamID
	}
	if cmd.TeamDomain == "" {
		cmd.TeamDomain = s.cfg.teamName
	}
	if cmd.UserName == "" {
		cmd.UserName = s.users[cmd.UserID].Name
	}
	if cmd.ChannelName == "" {
		cmd.ChannelName = s.channelNameLocked(cmd.ChannelID)
	}
	envID := newEnvelopeID()
	trig := s.newTriggerLocked(cmd.UserID, "")
	respURL := s.newResponseURLLocked(envID, cmd.ChannelID, "", cmd.UserID)
	s.mu.Unlock()
	payload := map[string]any{
		"token":                 "fake-verification-token",
		"team_id":               cmd.TeamID,
		"team_domain":           cmd.TeamDomain,
		"channel_id":            cmd.ChannelID,
		"channel_name":          cmd.ChannelName,
		"user_id":               cmd.UserID,
		"user_name":             cmd.UserName,
		"command":               cmd.Command,
		"text":                  cmd.Text,
		"api_app_id":            s.cfg.appID,
		"is_enterprise_install": "false",
		"response_url":          respURL,
		"trigger_id":            trig,
	}
	env := &Envelope{ID: envID, Type: "slash_commands", Payload: mustJSON(payload),
		AcceptsResponsePayload: true, TriggerID: trig, ResponseURL: respURL, s: s}
	return env, s.deliver(ctx, env)
}

// InteractionOption adjusts a block action or view submission.
type InteractionOption func(*interactionConfig)

type interactionConfig struct {
	blockID string
	viewID  string
	state   map[string]map[string]any
}

// WithBlockID sets the block_id of a block action when the fake cannot
// find the action in the message it was posted with.
func WithBlockID(id string) InteractionOption { return func(i *interactionConfig) { i.blockID = id } }

// WithViewID makes a block action come from inside a modal (container
// type "view"), or picks the view a submission belongs to.
func WithViewID(id string) InteractionOption { return func(i *interactionConfig) { i.viewID = id } }

// WithState adds an input's state value. A string is rendered the way the
// element in the view or message expects (value, selected_option,
// selected_user, ...); any other value is sent as that element's raw state.
func WithState(blockID, actionID string, value any) InteractionOption {
	return func(i *interactionConfig) {
		if i.state == nil {
			i.state = map[string]map[string]any{}
		}
		if i.state[blockID] == nil {
			i.state[blockID] = map[string]any{}
		}
		i.state[blockID][actionID] = value
	}
}

// BlockAction delivers an interactive block_actions envelope: user clicks
// actionID (with value) on the message channel/messageTS. The block_id,
// element type and button text are taken from the recorded message when
// the bot posted it through the fake.
func (s *Server) BlockAction(ctx context.Context, userID, channelID, messageTS, actionID, value string, opts ...InteractionOption) (*Envelope, error) {
	var in interactionConfig
	for _, o := range opts {
		o(&in)
	}
	s.mu.Lock()
	envID := newEnvelopeID()
	now := s.nextTSLocked()
	payload := map[string]any{
		"type":                  "block_actions",
		"user":                  s.interactionUserLocked(userID),
		"api_app_id":            s.cfg.appID,
		"token":                 "fake-verification-token",
		"team":                  map[string]any{"id": s.cfg.teamID, "domain": s.cfg.teamName},
		"enterprise":            nil,
		"is_enterprise_install": false,
	}
	var blocks json.RawMessage
	if v, ok := s.views[in.viewID]; ok && in.viewID != "" {
		payload["container"] = map[string]any{"type": "view", "view_id": v.id}
		vj := s.viewJSONLocked(v)
		vj["state"] = map[string]any{"values": s.stateLocked(v.view["blocks"], nil, in.state)}
		payload["view"] = vj
		blocks = v.view["blocks"]
	} else {
		container := map[string]any{"type": "message", "message_ts": messageTS, "channel_id": channelID, "is_ephemeral": false}
		payload["channel"] = map[string]any{"id": channelID, "name": s.channelNameLocked(channelID)}
		if m := s.findMessageLocked(channelID, messageTS); m != nil {
			payload["message"] = s.messageJSONLocked(m)
			blocks = m.blocks
			if m.threadTS != "" {
				container["thread_ts"] = m.threadTS
			}
		} else if em, ok := s.ephemeralLocked(channelID, messageTS); ok {
			container["is_ephemeral"] = true
			blocks = em.Blocks
		}
		payload["container"] = container
		payload["response_url"] = s.newResponseURLLocked(envID, channelID, messageTS, userID)
		payload["state"] = map[string]any{"values": s.stateLocked(blocks, nil, in.state)}
	}
	blockID, elem := findElement(blocks, "", actionID)
	if in.blockID != "" {
		blockID = in.blockID
	}
	if blockID == "" {
		blockID = "actions"
	}
	typ, _ := elem["type"].(string)
	if typ == "" {
		typ = "button"
	}
	action := elementValue(typ, elem, value)
	action["action_id"] = actionID
	action["block_id"] = blockID
	action["action_ts"] = now
	if t, ok := elem["text"]; ok {
		action["text"] = t
	}
	payload["actions"] = []any{action}
	trig := s.newTriggerLocked(userID, in.viewID)
	payload["trigger_id"] = trig
	s.mu.Unlock()

	env := &Envelope{ID: envID, Type: "interactive", Payload: mustJSON(payload), TriggerID: trig, s: s}
	if u, ok := payload["response_url"].(string); ok {
		env.ResponseURL = u
	}
	return env, s.deliver(ctx, env)
}

// ViewSubmission delivers an interactive view_submission envelope: user
// submits the modal with callbackID. values maps block_id → action_id →
// the entered value. The view (id, blocks, title, hash) is the latest one
// the bot opened for this user with that callback_id, or WithViewID's;
// element types found there decide how each value is rendered.
func (s *Server) ViewSubmission(ctx context.Context, userID, callbackID, privateMetadata string, values map[string]map[string]string, opts ...InteractionOption) (*Envelope, error) {
	var in interactionConfig
	for _, o := range opts {
		o(&in)
	}
	s.mu.Lock()
	v := s.views[in.viewID]
	if v == nil {
		for _, cand := range s.views {
			if cand.userID == userID && str(cand.view, "callback_id") == callbackID && (v == nil || cand.id > v.id) {
				v = cand
			}
		}
	}
	if v == nil {
		v = &storedView{id: s.nextIDLocked("V"), userID: userID, hash: s.newHashLocked(),
			view: map[string]json.RawMessage{"type": mustJSON("modal"), "callback_id": mustJSON(callbackID)}}
		v.rootID = v.id
	}
	vj := s.viewJSONLocked(v)
	vj["callback_id"] = callbackID
	if privateMetadata != "" {
		vj["private_metadata"] = privateMetadata
	}
	vj["state"] = map[string]any{"values": s.stateLocked(v.view["blocks"], values, in.state)}
	trig := s.newTriggerLocked(userID, v.id)
	payload := map[string]any{
		"type":                  "view_submission",
		"team":                  map[string]any{"id": s.cfg.teamID, "domain": s.cfg.teamName},
		"user":                  s.interactionUserLocked(userID),
		"api_app_id":            s.cfg.appID,
		"token":                 "fake-verification-token",
		"trigger_id":            trig,
		"view":                  vj,
		"response_urls":         []any{},
		"enterprise":            nil,
		"is_enterprise_install": false,
	}
	s.mu.Unlock()
	env := &Envelope{ID: newEnvelopeID(), Type: "interactive", Payload: mustJSON(payload),
		AcceptsResponsePayload: true, TriggerID: trig, s: s}
	return env, s.deliver(ctx, env)
}

func (s *Server) interactionUserLocked(userID string) map[string]any {
	u := s.users[userID]
	name := u.Name
	if name == "" {
		name = strings.ToLower(userID)
	}
	return map[string]any{"id": userID, "username": name, "name": name, "team_id": s.cfg.teamID}
}

func (s *Server) channelNameLocked(id string) string {
	for name, c := range s.channels {
		if c.ID == id {
			return name
		}
	}
	if strings.HasPrefix(id, "D") {
		return "directmessage"
	}
	return ""
}

func (s *Server) ephemeralLocked(channel, ts string) (Message, bool) {
	for _, m := range s.messages {
		if m.Ephemeral && m.Channel == channel && m.TS == ts {
			return m, true
		}
	}
	return Message{}, false
}

// stateLocked builds view/message state values: strings from values and
// extra are rendered per the element type found in blocks.
func (s *Server) stateLocked(blocks json.RawMessage, values map[string]map[string]string, extra map[string]map[string]any) map[string]any {
	out := map[string]any{}
	put := func(blockID, actionID string, v any) {
		bm, _ := out[blockID].(map[string]any)
		if bm == nil {
			bm = map[string]any{}
			out[blockID] = bm
		}
		if str, ok := v.(string); ok {
			_, elem := findElement(blocks, blockID, actionID)
			typ, _ := elem["type"].(string)
			if typ == "" {
				typ = "plain_text_input"
			}
			bm[actionID] = elementValue(typ, elem, str)
			return
		}
		bm[actionID] = v
	}
	for b, as := range values {
		for a, v := range as {
			put(b, a, v)
		}
	}
	for b, as := range extra {
		for a, v := range as {
			put(b, a, v)
		}
	}
	return out
}

// findElement looks for the interactive element with actionID (in the
// block blockID, if given) and returns its block id and JSON object.
func findElement(blocks json.RawMessage, blockID, actionID string) (string, map[string]any) {
	var bs []map[string]any
	if len(blocks) == 0 || json.Unmarshal(blocks, &bs) != nil {
		return "", nil
	}
	for _, b := range bs {
		id, _ := b["block_id"].(string)
		if blockID != "" && id != blockID {
			continue
		}
		var cands []any
		if els, ok := b["elements"].([]any); ok {
			cands = append(cands, els...)
		}
		cands = append(cands, b["accessory"], b["element"])
		for _, c := range cands {
			if e, ok := c.(map[string]any); ok && e["action_id"] == actionID {
				return id, e
			}
		}
	}
	return "", nil
}

// elementValue renders the value of an element the way Slack reports it
// in actions and state.
func elementValue(typ string, elem map[string]any, value string) map[string]any {
	out := map[string]any{"type": typ}
	switch typ {
	case "static_select", "external_select", "overflow", "radio_buttons":
		out["selected_option"] = findOption(elem, value)
	case "users_select":
		out["selected_user"] = value
	case "conversations_select":
		out["selected_conversation"] = value
	case "channels_select":
		out["selected_channel"] = value
	case "datepicker":
		out["selected_date"] = value
	case "timepicker":
		out["selected_time"] = value
	default:
		out["value"] = value
	}
	return out
}

// findOption returns the element's option with that value, or a plain one.
func findOption(elem map[string]any, value string) any {
	var opts []any
	if o, ok := elem["options"].([]any); ok {
		opts = append(opts, o...)
	}
	if groups, ok := elem["option_groups"].([]any); ok {
		for _, g := range groups {
			if gm, ok := g.(map[string]any); ok {
				if o, ok := gm["options"].([]any); ok {
					opts = append(opts, o...)
				}
			}
		}
	}
	for _, o := range opts {
		if om, ok := o.(map[string]any); ok && om["value"] == value {
			return om
		}
	}
	return map[string]any{"text": map[string]any{"type": "plain_text", "text": value}, "value": value}
}
