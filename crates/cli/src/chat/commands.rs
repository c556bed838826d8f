//! The chat commands a line may be: `/new` and `/reset` (recognised by the turns crate's
//! [`session_command`], the parser every channel and `chat.send` use), `/model`, `/think`,
//! `/status`, `/stop`, `/sessions`, `/help` and `/exit`. Anything else — including a line
//! that merely starts with a slash, like a path — is a message for the agent.

use pincer_turns::turn::{SessionCommand, session_command};

/// What one line of input asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatCommand {
    /// A message for the agent.
    Message(String),
    /// Start the session over; `rest` is the new session's first message.
    New {
        rest: Option<String>,
    },
    /// Show the model (`None`) or set it: `provider/model`, or `default` to clear.
    Model(Option<Setting>),
    /// Show the thinking level (`None`) or set it (off, minimal, … xhigh; `default`).
    Think(Option<Setting>),
    Status,
    Stop,
    Sessions,
    Help,
    Exit,
}

/// A value a command sets: a new value or back to the configured default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    Value(String),
    Default,
}

/// The help text `/help` prints.
pub const HELP: &str = "\
/new [message]     start a new session (the old transcript is kept)
/model [p/model]   show or set this session's model (`/model default` clears it)
/think [level]     show or set the thinking level: off, minimal, low, medium, high, xhigh
/status            the session, model and token counts
/sessions          the agent's sessions, most recent first
/stop              stop the session's running reply (Ctrl-C stops the one streaming here)
/exit              leave (also Ctrl-D, or Ctrl-C twice)
A line ending in \\ continues on the next line.";

/// The chat's own commands: every spelling (the first is the one Tab completes and `/help`
/// shows) and what it is. The session commands (`/new`, `/reset`) are the turns crate's.
const OWN: &[(&[&str], Own)] = &[
    (&["/model", "/models"], Own::Model),
    (&["/think", "/thinking", "/t"], Own::Think),
    (&["/status"], Own::Status),
    (&["/stop", "/abort"], Own::Stop),
    (&["/sessions"], Own::Sessions),
    (&["/help", "/?"], Own::Help),
    (&["/exit", "/quit"], Own::Exit),
];

#[derive(Clone, Copy)]
enum Own {
    Model,
    Think,
    Status,
    Stop,
    Sessions,
    Help,
    Exit,
}

/// Every command Tab completes: the session commands, then the chat's own.
pub fn completions() -> impl Iterator<Item = &'static str> {
    let session = pincer_turns::commands::COMMANDS
        .iter()
        .flat_map(|command| command.aliases.iter().copied());
    session.chain(OWN.iter().map(|(spellings, _)| spellings[0]))
}

/// Classifies one line of input.
pub fn parse(line: &str) -> ChatCommand {
    if let Some(SessionCommand::NewSession { rest }) = session_command(line) {
        return ChatCommand::New { rest };
    }
    let trimmed = line.trim();
    let (word, arg) = match trimmed.split_once(char::is_whitespace) {
        Some((word, arg)) => (word, Some(arg.trim()).filter(|a| !a.is_empty())),
        None => (trimmed, None),
    };
    let setting = || {
        arg.map(|a| match a {
            "default" | "reset" => Setting::Default,
            value => Setting::Value(value.to_owned()),
        })
    };
    let own = OWN
        .iter()
        .find(|(spellings, _)| spellings.contains(&word))
        .map(|(_, own)| *own);
    match (own, arg) {
        (Some(Own::Model), _) => ChatCommand::Model(setting()),
        (Some(Own::Think), _) => ChatCommand::Think(setting()),
        // The rest take no argument: with one, the line is a message.
        (Some(Own::Status), None) => ChatCommand::Status,
        (Some(Own::Stop), None) => ChatCommand::Stop,
        (Some(Own::Sessions), None) => ChatCommand::Sessions,
        (Some(Own::Help), None) => ChatCommand::Help,
        (Some(Own::Exit), None) => ChatCommand::Exit,
        _ => ChatCommand::Message(line.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_commands_or_messages() {
        let cases: &[(&str, ChatCommand)] = &[
            ("/new", ChatCommand::New { rest: None }),
            (
                "/reset hi there",
                ChatCommand::New {
                    rest: Some("hi there".into()),
                },
            ),
            ("/model", ChatCommand::Model(None)),
            (
                "/model  mock/backup ",
                ChatCommand::Model(Some(Setting::Value("mock/backup".into()))),
            ),
            ("/model default", ChatCommand::Model(Some(Setting::Default))),
            (
                "/think high",
                ChatCommand::Think(Some(Setting::Value("high".into()))),
            ),
            ("/think", ChatCommand::Think(None)),
            (" /status ", ChatCommand::Status),
            ("/stop", ChatCommand::Stop),
            ("/sessions", ChatCommand::Sessions),
            ("/help", ChatCommand::Help),
            ("/quit", ChatCommand::Exit),
            ("/newer", ChatCommand::Message("/newer".into())),
            (
                "/status please",
                ChatCommand::Message("/status please".into()),
            ),
            ("/etc/hosts?", ChatCommand::Message("/etc/hosts?".into())),
            ("hello /new", ChatCommand::Message("hello /new".into())),
        ];
        for (line, want) in cases {
            assert_eq!(&parse(line), want, "{line:?}");
        }
    }

    #[test]
    fn tab_completes_every_command_once() {
        assert_eq!(
            completions().collect::<Vec<_>>(),
            [
                "/new",
                "/reset",
                "/model",
                "/think",
                "/status",
                "/stop",
                "/sessions",
                "/help",
                "/exit"
            ]
        );
    }
}
