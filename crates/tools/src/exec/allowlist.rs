//! The command-line check for `ExecSecurity::Allowlist`. A small POSIX-shell tokenizer
//! splits the line into simple commands at `;`, `&`, `&&`, `|`, `||`, `|&` and newlines,
//! handling quotes, backslash escapes, line continuations and comments, and every
//! command's program must be on the allowlist.
//!
//! Refused outright, because they run or touch things the check cannot see: command
//! substitution (`$(...)`, backticks, also inside double quotes and `${...}`), process
//! substitution (`<(...)`, `>(...)`), subshells and grouping with parentheses (and so
//! function definitions), here-documents, redirections to or from anything but
//! `/dev/null` (fd duplication like `2>&1` is fine), a program name that uses expansion or
//! globbing (`$X`, `*`, `~`), assignments before a command to variables that change which
//! program runs (`PATH=`, `LD_PRELOAD=`, ...) and anything unparseable (an unterminated
//! quote).
//!
//! Matching is exact on the program word after quote removal: `ls` allows `ls` found
//! through `PATH` only; `./ls` or `/bin/ls` need their own entries. Allowing a program
//! allows all of its arguments. Programs that run other programs (`sh`, `bash`, `eval`,
//! `exec`, `env`, `xargs`, `sudo`, `nohup`, `time`, `command`, `find -exec`, ...) are not
//! special-cased: allowing one of them effectively allows everything. Shell keywords
//! (`if`, `for`, `while`, `{`, `!`) count as programs, so compound commands are refused
//! unless those words are listed.

use super::env::is_guarded;

/// Why a command line is refused in allowlist mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllowlistError {
    #[error("`{program}` is not in the exec allowlist")]
    NotAllowed { program: String },
    #[error("command substitution ({0}) is not allowed in allowlist mode")]
    Substitution(&'static str),
    #[error("process substitution ({0}) is not allowed in allowlist mode")]
    ProcessSubstitution(&'static str),
    #[error("subshells and grouping with `(` `)` are not allowed in allowlist mode")]
    Subshell,
    #[error("here-documents (`<<`) are not allowed in allowlist mode")]
    HereDocument,
    #[error(
        "redirection `{op}` to or from {target:?} is not allowed in allowlist mode (only /dev/null)"
    )]
    Redirection { op: String, target: String },
    #[error("redirection `{0}` has no target")]
    MissingTarget(String),
    #[error("the program name `{0}` uses expansion or globbing; write it literally")]
    DynamicProgram(String),
    #[error("assigning {0} before a command is not allowed in allowlist mode")]
    GuardedAssignment(String),
    #[error("`{0}` is not supported in allowlist mode")]
    Unsupported(String),
    #[error("unterminated {0} in the command line")]
    Unterminated(&'static str),
}

/// One word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    pub text: String,
    /// Contains an unquoted expansion (`$x`, `${x}`), glob (`*?[`) or leading `~`.
    pub dynamic: bool,
    /// `NAME` when the word is an assignment `NAME=value`.
    pub assigns: Option<String>,
}

/// Check `line` against `allowed`; `Ok` lists the programs it runs.
pub fn check(line: &str, allowed: &[String]) -> Result<Vec<String>, AllowlistError> {
    let mut programs = Vec::new();
    for command in parse(line)? {
        let mut words = command.into_iter();
        let program = loop {
            match words.next() {
                Some(Word {
                    assigns: Some(name),
                    ..
                }) => {
                    if is_guarded(&name) {
                        return Err(AllowlistError::GuardedAssignment(name));
                    }
                }
                other => break other,
            }
        };
        let Some(program) = program else { continue };
        if program.dynamic {
            return Err(AllowlistError::DynamicProgram(program.text));
        }
        if !allowed.contains(&program.text) {
            return Err(AllowlistError::NotAllowed {
                program: program.text,
            });
        }
        programs.push(program.text);
    }
    Ok(programs)
}

/// Split a command line into simple commands (lists of words; redirections checked and
/// removed).
pub fn parse(line: &str) -> Result<Vec<Vec<Word>>, AllowlistError> {
    Lexer {
        chars: line.chars().collect(),
        pos: 0,
    }
    .run()
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
}

fn is_operator(c: char) -> bool {
    matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>' | '\n')
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl Lexer {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn skip_blanks(&mut self) {
        while let Some(c) = self.peek() {
            if is_blank(c) {
                self.pos += 1;
            } else if c == '\\' && self.peek_at(1) == Some('\n') {
                self.pos += 2;
            } else {
                break;
            }
        }
    }

    fn run(mut self) -> Result<Vec<Vec<Word>>, AllowlistError> {
        let mut commands = Vec::new();
        let mut current: Vec<Word> = Vec::new();
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else { break };
            match c {
                '\n' | ';' | '&' | '|' => {
                    self.pos += 1;
                    if c == '&' && self.peek() == Some('>') {
                        self.pos += 1;
                        let op = if self.eat('>') { "&>>" } else { "&>" };
                        self.redirect_to_file(op)?;
                        continue;
                    }
                    if c == ';' && self.peek() == Some(';') {
                        return Err(AllowlistError::Unsupported(";;".into()));
                    }
                    // `&&`, `||` and `|&` are separators like `&` and `|`.
                    let doubled = match c {
                        '&' => self.eat('&'),
                        '|' => self.eat('|') || self.eat('&'),
                        _ => false,
                    };
                    let _ = doubled;
                    commands.push(std::mem::take(&mut current));
                }
                '(' | ')' => return Err(AllowlistError::Subshell),
                '<' | '>' => self.redirection(String::new())?,
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                _ => {
                    let word = self.word()?;
                    let fd_prefix = !word.dynamic
                        && word.assigns.is_none()
                        && !word.text.is_empty()
                        && word.text.chars().all(|c| c.is_ascii_digit())
                        && matches!(self.peek(), Some('<' | '>'))
                        && self
                            .chars
                            .get(self.pos - 1)
                            .is_some_and(|c| c.is_ascii_digit());
                    if fd_prefix {
                        self.redirection(word.text)?;
                    } else {
                        current.push(word);
                    }
                }
            }
        }
        commands.push(current);
        Ok(commands
            .into_iter()
            .filter(|c: &Vec<Word>| !c.is_empty())
            .collect())
    }

    /// At `<` or `>` (after an optional fd number).
    fn redirection(&mut self, fd: String) -> Result<(), AllowlistError> {
        let Some(first) = self.peek() else {
            return Ok(());
        };
        self.pos += 1;
        let next = self.peek();
        match (first, next) {
            ('<', Some('<')) => Err(AllowlistError::HereDocument),
            ('<', Some('(')) => Err(AllowlistError::ProcessSubstitution("<(...)")),
            ('>', Some('(')) => Err(AllowlistError::ProcessSubstitution(">(...)")),
            (_, Some('&')) => {
                self.pos += 1;
                let op = format!("{fd}{first}&");
                self.skip_blanks();
                let target = self.word()?;
                let is_dup = !target.dynamic
                    && (target.text == "-"
                        || (!target.text.is_empty()
                            && target.text.chars().all(|c| c.is_ascii_digit())));
                if is_dup {
                    Ok(())
                } else {
                    check_target(&op, &target)
                }
            }
            _ => {
                let op = match (first, next) {
                    ('>', Some('>')) => {
                        self.pos += 1;
                        ">>"
                    }
                    ('>', Some('|')) => {
                        self.pos += 1;
                        ">|"
                    }
                    ('<', Some('>')) => {
                        self.pos += 1;
                        "<>"
                    }
                    ('>', _) => ">",
                    _ => "<",
                };
                self.redirect_to_file(&format!("{fd}{op}"))
            }
        }
    }

    fn redirect_to_file(&mut self, op: &str) -> Result<(), AllowlistError> {
        self.skip_blanks();
        if self.peek() == Some('(') {
            return Err(AllowlistError::Subshell);
        }
        let target = self.word()?;
        check_target(op, &target)
    }

    /// Read one word (quote removal done; substitutions refused).
    fn word(&mut self) -> Result<Word, AllowlistError> {
        let mut word = Word::default();
        // Whether everything so far could be the NAME of `NAME=value`.
        let mut name_so_far = true;
        while let Some(c) = self.peek() {
            if is_blank(c) || is_operator(c) {
                break;
            }
            self.pos += 1;
            let quoted_or_special = match c {
                '\\' => match self.peek() {
                    Some('\n') => {
                        self.pos += 1;
                        continue;
                    }
                    Some(next) => {
                        self.pos += 1;
                        word.text.push(next);
                        true
                    }
                    None => {
                        word.text.push('\\');
                        true
                    }
                },
                '\'' => {
                    loop {
                        match self.peek() {
                            None => return Err(AllowlistError::Unterminated("single quote")),
                            Some('\'') => break,
                            Some(q) => word.text.push(q),
                        }
                        self.pos += 1;
                    }
                    self.pos += 1;
                    true
                }
                '"' => {
                    self.double_quoted(&mut word)?;
                    true
                }
                '`' => return Err(AllowlistError::Substitution("backticks")),
                '$' => {
                    self.dollar(&mut word)?;
                    true
                }
                '=' if name_so_far && word.assigns.is_none() && !word.text.is_empty() => {
                    word.assigns = Some(word.text.clone());
                    word.text.push('=');
                    continue;
                }
                _ => {
                    if matches!(c, '*' | '?' | '[') || (c == '~' && word.text.is_empty()) {
                        word.dynamic = true;
                    }
                    word.text.push(c);
                    !is_name_char(c) || (word.text.len() == 1 && c.is_ascii_digit())
                }
            };
            if quoted_or_special {
                name_so_far = false;
            }
        }
        Ok(word)
    }

    fn double_quoted(&mut self, word: &mut Word) -> Result<(), AllowlistError> {
        loop {
            let Some(c) = self.peek() else {
                return Err(AllowlistError::Unterminated("double quote"));
            };
            self.pos += 1;
            match c {
                '"' => return Ok(()),
                '\\' => match self.peek() {
                    Some('\n') => self.pos += 1,
                    Some(e @ ('$' | '`' | '"' | '\\')) => {
                        self.pos += 1;
                        word.text.push(e);
                    }
                    _ => word.text.push('\\'),
                },
                '`' => return Err(AllowlistError::Substitution("backticks")),
                '$' => self.dollar(word)?,
                _ => word.text.push(c),
            }
        }
    }

    /// After a `$`.
    fn dollar(&mut self, word: &mut Word) -> Result<(), AllowlistError> {
        match self.peek() {
            Some('(') => Err(AllowlistError::Substitution("$(...)")),
            Some('{') => {
                self.pos += 1;
                let mut depth = 1;
                let mut text = String::from("${");
                while depth > 0 {
                    let Some(c) = self.peek() else {
                        return Err(AllowlistError::Unterminated("${...}"));
                    };
                    self.pos += 1;
                    match c {
                        '`' => return Err(AllowlistError::Substitution("backticks")),
                        '$' if self.peek() == Some('(') => {
                            return Err(AllowlistError::Substitution("$(...)"));
                        }
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    text.push(c);
                }
                word.text.push_str(&text);
                word.dynamic = true;
                Ok(())
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                word.text.push('$');
                word.dynamic = true;
                while let Some(n) = self.peek().filter(|n| is_name_char(*n)) {
                    word.text.push(n);
                    self.pos += 1;
                }
                Ok(())
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                word.text.push('$');
                word.text.push(c);
                word.dynamic = true;
                self.pos += 1;
                Ok(())
            }
            Some('\'') => Err(AllowlistError::Unsupported("$'...'".into())),
            _ => {
                word.text.push('$');
                Ok(())
            }
        }
    }
}

fn check_target(op: &str, target: &Word) -> Result<(), AllowlistError> {
    if target.text.is_empty() && !target.dynamic {
        return Err(AllowlistError::MissingTarget(op.to_owned()));
    }
    if !target.dynamic && target.text == "/dev/null" {
        Ok(())
    } else {
        Err(AllowlistError::Redirection {
            op: op.to_owned(),
            target: target.text.clone(),
        })
    }
}
