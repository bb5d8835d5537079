// Package console is the chat transport for a terminal: a person types
// "/ticket show 42" and reads the answer; alerts and pages print as text
// cards whose buttons are numbered, and typing a number presses one.
//
// What it owns: reading lines, rendering Replies and Cards as text, the
// numbered buttons, and printing alerts and pages (it implements
// chat.Notifier and oncall.Pager).
//
// What it may import: bot/chat, oncall and sdclient. It declares the Router
// interface it needs (Dispatch, KeyAgent, AlertCard), which *bot.Router
// implements, and never imports bot: it reaches the desk only through the
// router.
package console
