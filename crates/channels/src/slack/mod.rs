//! Slack: Socket Mode for receiving, the Web API for sending (work in progress).
