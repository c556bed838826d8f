//! The chat commands a line may be: the ones every chat surface shares (`/new`, `/reset`,
//! `/model`, `/think`, `/status`, `/stop`, `/help`, `/usage`, `/queue`, `/verbose`,
//! `/compact`: [`pincer_turns::commands`], the table
//! the gateway answers from too) and the terminal's own, `/sessions` and `/exit`. Anything
//! else — including a line that merely starts with a slash, like a path — is a message for
//! the agent.

use pincer_turns::commands::{COMMANDS, Command, help_lines};

/// What one line of input asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatCommand {
    /// A message for the agent.
    Message(String),
    /// One of the shared chat commands.
    Shared(Command),
    Sessions,
    Exit,
}

/// The terminal's own commands: every spelling (the first is the one Tab completes and
/// `/help` shows), its usage line and what it is.
const OWN: &[(&[&str], &str, ChatCommand)] = &[
    (
        &["/sessions"],
        "/sessions            the agent's sessions, most recent first",
        ChatCommand::Sessions,
    ),
    (
        &["/exit", "/quit"],
        "/exit                leave (also Ctrl-D, or Ctrl-C twice)",
        ChatCommand::Exit,
    ),
];

/// The help text `/help` prints: the shared commands, the terminal's own, and how to go on
/// to a next line.
pub fn help() -> String {
    let mut lines = help_lines();
    lines.extend(OWN.iter().map(|(_, usage, _)| (*usage).to_owned()));
    lines.push(
        "Ctrl-C stops a reply while it streams. A line ending in \\ continues on the next line."
            .to_owned(),
    );
    lines.join("\n")
}

/// Every command Tab completes: the shared ones, then the terminal's own.
pub fn completions() -> impl Iterator<Item = &'static str> {
    let shared = COMMANDS.iter().map(|command| command.aliases[0]);
    shared.chain(OWN.iter().map(|(spellings, _, _)| spellings[0]))
}

/// Classifies one line of input.
pub fn parse(line: &str) -> ChatCommand {
    if let Some(command) = pincer_turns::commands::parse(line) {
        return ChatCommand::Shared(command);
    }
    let trimmed = line.trim();
    OWN.iter()
        .find(|(spellings, _, _)| spellings.contains(&trimmed))
        .map_or_else(
            || ChatCommand::Message(line.to_owned()),
            |(_, _, own)| own.clone(),
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pincer_turns::commands::Setting;

    #[test]
    fn lines_are_commands_or_messages() {
        let cases: &[(&str, ChatCommand)] = &[
            (
                "/new",
                ChatCommand::Shared(Command::NewSession { rest: None }),
            ),
            (
                "/model  mock/backup ",
                ChatCommand::Shared(Command::Model(Some(Setting::Value("mock/backup".into())))),
            ),
            (" /status ", ChatCommand::Shared(Command::Status)),
            ("/help", ChatCommand::Shared(Command::Help)),
            ("/sessions", ChatCommand::Sessions),
            ("/quit", ChatCommand::Exit),
            ("/exit now", ChatCommand::Message("/exit now".into())),
            ("/newer", ChatCommand::Message("/newer".into())),
            (
                "/status please",
                ChatCommand::Message("/status please".into()),
            ),
            ("/etc/hosts?", ChatCommand::Message("/etc/hosts?".into())),
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
                "/compact",
                "/status",
                "/usage",
                "/model",
                "/think",
                "/verbose",
                "/activation",
                "/queue",
                "/stop",
                "/subagents",
                "/approve",
                "/help",
                "/sessions",
                "/exit"
            ]
        );
    }

    #[test]
    fn help_names_every_command() {
        let help = help();
        for command in completions() {
            assert!(
                help.contains(&format!("\n{command}")) || help.starts_with(command),
                "{command}"
            );
        }
    }
}
