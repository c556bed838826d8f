//! Feishu / Lark: the long connection and HTTP event callbacks for receiving, the Open API for sending (work in progress).
