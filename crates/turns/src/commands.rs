//! The chat commands Pincer understands at the start of a message (`/new`, `/reset`): one
//! table that both the parser ([`crate::turn::session_command`]) and the gateway's
//! `commands.list` read, so a client is never offered a command the parser does not know,
//! nor the parser taught one the list does not show.

/// What a command does when a message starts with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandAction {
    /// Start a new session under the same key; text after the command is its first message.
    NewSession,
}

/// The group a command is shown under (OpenClaw's categories).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandCategory {
    Session,
}

impl CommandCategory {
    /// The category's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Session => "session",
        }
    }
}

/// One chat command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChatCommand {
    /// The name, without the slash.
    pub name: &'static str,
    /// Every way to type it, with the slash.
    pub aliases: &'static [&'static str],
    pub description: &'static str,
    pub category: CommandCategory,
    /// Whether text may follow the command.
    pub accepts_args: bool,
    pub action: CommandAction,
}

/// Every chat command, in the order lists show them.
pub const COMMANDS: &[ChatCommand] = &[
    ChatCommand {
        name: "new",
        aliases: &["/new"],
        description: "Begin a fresh session; any text after it is the new session's first message.",
        category: CommandCategory::Session,
        accepts_args: true,
        action: CommandAction::NewSession,
    },
    ChatCommand {
        name: "reset",
        aliases: &["/reset"],
        description: "Same as /new: archive this session and begin a fresh one.",
        category: CommandCategory::Session,
        accepts_args: true,
        action: CommandAction::NewSession,
    },
];

/// The command `text` starts with (an alias followed by white space or the end, after
/// leading white space), and the rest of the text, trimmed.
pub fn parse_command(text: &str) -> Option<(&'static ChatCommand, &str)> {
    let trimmed = text.trim();
    COMMANDS.iter().find_map(|command| {
        command.aliases.iter().find_map(|alias| {
            let rest = trimmed.strip_prefix(alias)?;
            (rest.is_empty() || rest.starts_with(char::is_whitespace))
                .then(|| (command, rest.trim()))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_read_from_the_table() {
        fn name(text: &str) -> Option<(&'static str, &str)> {
            parse_command(text).map(|(c, rest)| (c.name, rest))
        }
        assert_eq!(name("/new"), Some(("new", "")));
        assert_eq!(name("  /reset  hi there "), Some(("reset", "hi there")));
        assert_eq!(name("/newer"), None);
        assert_eq!(name("say /new"), None);
    }

    #[test]
    fn every_alias_starts_with_a_slash_and_names_are_unique() {
        let mut names: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COMMANDS.len());
        for c in COMMANDS {
            assert!(c.aliases.iter().all(|a| a.starts_with('/')), "{}", c.name);
        }
    }
}
