//! The allowlist's tokenizer: reads a command line the way `dash` and `bash` both would,
//! for the subset of the language described in [`super`], and refuses anything outside it.
//! Every branch that accepts input is one whose meaning is fixed in both shells: where a
//! word, an expansion or a command ends. When in doubt, it refuses.

use super::AllowlistError;
use crate::exec::env::is_guarded;

/// One word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    pub text: String,
    /// Contains an expansion (`$x`, `${x}`, quoted or not), an unquoted glob (`*?[`),
    /// brace (`{` `}`) or leading `~`: what it runs or means is decided at run time.
    pub dynamic: bool,
    /// `NAME` when the word is an assignment `NAME=value`.
    pub assigns: Option<String>,
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

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Characters allowed in the word of `${NAME<op>word}`: none can end the expansion,
/// nest one, quote, escape, expand or start an operator.
fn is_param_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_./,:=+-@%^*?~#".contains(c)
}

fn unsupported(what: impl Into<String>) -> AllowlistError {
    AllowlistError::Unsupported(what.into())
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

    /// Blanks, and `\` + newline where it joins nothing (after a blank or a newline, or at
    /// the start); elsewhere a line continuation glues tokens together and is refused.
    fn skip_blanks(&mut self) -> Result<(), AllowlistError> {
        while let Some(c) = self.peek() {
            if is_blank(c) {
                self.pos += 1;
            } else if c == '\\' && self.peek_at(1) == Some('\n') {
                let after_space = self.pos == 0
                    || self
                        .chars
                        .get(self.pos - 1)
                        .is_some_and(|p| is_blank(*p) || *p == '\n');
                if !after_space {
                    return Err(unsupported("\\ + newline that joins two tokens"));
                }
                self.pos += 2;
            } else {
                break;
            }
        }
        Ok(())
    }

    fn run(mut self) -> Result<Vec<Vec<Word>>, AllowlistError> {
        let mut commands = Vec::new();
        let mut current: Vec<Word> = Vec::new();
        loop {
            self.skip_blanks()?;
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
                    if c == ';' && matches!(self.peek(), Some(';' | '&')) {
                        return Err(unsupported(format!(";{}", self.chars[self.pos])));
                    }
                    // `&&`, `||` and `|&` separate commands like `&` and `|`.
                    match c {
                        '&' => {
                            self.eat('&');
                        }
                        '|' => {
                            let _ = self.eat('|') || self.eat('&');
                        }
                        _ => {}
                    }
                    commands.push(std::mem::take(&mut current));
                }
                '(' | ')' => return Err(AllowlistError::Subshell),
                '<' | '>' => self.redirection(String::new())?,
                '#' => {
                    // A comment runs to the newline; `\` + newline does not continue it
                    // in either shell.
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                _ => {
                    let start = self.pos;
                    let word = self.word()?;
                    let fd_prefix = !word.dynamic
                        && word.assigns.is_none()
                        && !word.text.is_empty()
                        && self.pos - start == word.text.len()
                        && word.text.chars().all(|c| c.is_ascii_digit())
                        && matches!(self.peek(), Some('<' | '>'));
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
                self.skip_blanks()?;
                let target = self.target(&op)?;
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
        self.skip_blanks()?;
        let target = self.target(op)?;
        check_target(op, &target)
    }

    /// The word after a redirection operator. A `#` there would start a comment in the
    /// shell, leaving the operator without a target.
    fn target(&mut self, op: &str) -> Result<Word, AllowlistError> {
        match self.peek() {
            Some('(') => Err(AllowlistError::Subshell),
            Some('#') | None => Err(AllowlistError::MissingTarget(op.to_owned())),
            Some(c) if is_operator(c) => Err(AllowlistError::MissingTarget(op.to_owned())),
            _ => self.word(),
        }
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
                        return Err(unsupported("\\ + newline inside a word"));
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
                    self.dollar(&mut word, false)?;
                    true
                }
                '=' if name_so_far && word.assigns.is_none() && !word.text.is_empty() => {
                    word.assigns = Some(word.text.clone());
                    word.text.push('=');
                    continue;
                }
                _ => {
                    // Globs, braces (bash's `{a,b}` expansion, the `{` `}` keywords) and
                    // a leading tilde all mean something only the shell decides.
                    if matches!(c, '*' | '?' | '[' | '{' | '}')
                        || (c == '~' && word.text.is_empty())
                    {
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
                    Some('\n') => return Err(unsupported("\\ + newline inside double quotes")),
                    Some(e @ ('$' | '`' | '"' | '\\')) => {
                        self.pos += 1;
                        word.text.push(e);
                    }
                    _ => word.text.push('\\'),
                },
                '`' => return Err(AllowlistError::Substitution("backticks")),
                '$' => self.dollar(word, true)?,
                _ => word.text.push(c),
            }
        }
    }

    /// After a `$` (inside double quotes when `quoted`).
    fn dollar(&mut self, word: &mut Word, quoted: bool) -> Result<(), AllowlistError> {
        match self.peek() {
            Some('(') if self.peek_at(1) == Some('(') => {
                Err(AllowlistError::Substitution("arithmetic $((...))"))
            }
            Some('(') => Err(AllowlistError::Substitution("$(...)")),
            Some('[') => Err(unsupported("$[...]")),
            Some('\'') => Err(unsupported("$'...'")),
            Some('"') if !quoted => Err(unsupported("$\"...\"")),
            Some('{') => {
                self.pos += 1;
                let body = self.param_body()?;
                word.text.push_str("${");
                word.text.push_str(&body);
                word.text.push('}');
                word.dynamic = true;
                Ok(())
            }
            Some(c) if is_name_start(c) => {
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
            // A lone `$` is literal in both shells before these.
            None => {
                word.text.push('$');
                Ok(())
            }
            Some(c) if is_blank(c) || is_operator(c) || (quoted && c == '"') => {
                word.text.push('$');
                Ok(())
            }
            Some(c) if "/.,:=+%^".contains(c) => {
                word.text.push('$');
                Ok(())
            }
            Some(c) => Err(unsupported(format!("${c}"))),
        }
    }

    /// After `${`: the body up to and including its `}`, in the one shape whose end and
    /// meaning both shells agree on (see [`super`]). Returns the body without the braces.
    fn param_body(&mut self) -> Result<String, AllowlistError> {
        let refuse = |lexer: &Self, start: usize| {
            let end = lexer.chars[start..]
                .iter()
                .position(|c| *c == '}')
                .map_or(lexer.chars.len(), |i| start + i + 1);
            let text: String = lexer.chars[start.saturating_sub(2)..end].iter().collect();
            unsupported(text)
        };
        let start = self.pos;
        let mut body = String::new();
        // `${#NAME}`: the length; `${#}` is the number of arguments.
        let length = self.peek() == Some('#') && self.peek_at(1) != Some('}');
        if length {
            self.pos += 1;
            body.push('#');
        }
        let mut name = String::new();
        match self.peek() {
            Some(c) if is_name_start(c) => {
                while let Some(n) = self.peek().filter(|n| is_name_char(*n)) {
                    name.push(n);
                    self.pos += 1;
                }
            }
            Some(c) if c.is_ascii_digit() => {
                while let Some(n) = self.peek().filter(char::is_ascii_digit) {
                    name.push(n);
                    self.pos += 1;
                }
            }
            // A special parameter, but not its length: `${##}`, `${#$}` and the like read
            // as a length or as a `#` operation depending on the shell.
            Some(c) if "@*#?$-".contains(c) && !length => {
                name.push(c);
                self.pos += 1;
            }
            Some('!') if self.peek_at(1) == Some('}') => {
                name.push('!');
                self.pos += 1;
            }
            None => return Err(AllowlistError::Unterminated("${...}")),
            Some(_) => return Err(refuse(self, start)),
        }
        body.push_str(&name);
        if self.eat('}') {
            return Ok(body);
        }
        // No operations on the length, nor on a special parameter: `${$#}`, `${#-x}` and
        // the like split differently in different shells.
        let special = name.len() == 1 && "@*#?$-!".contains(name.as_str());
        if length || special {
            return Err(refuse(self, start));
        }
        let op: &str = match (self.peek(), self.peek_at(1)) {
            (Some(':'), Some(c @ ('-' | '=' | '+' | '?'))) => {
                self.pos += 2;
                match c {
                    '-' => ":-",
                    '=' => ":=",
                    '+' => ":+",
                    _ => ":?",
                }
            }
            (Some(c @ ('-' | '=' | '+' | '?')), _) => {
                self.pos += 1;
                match c {
                    '-' => "-",
                    '=' => "=",
                    '+' => "+",
                    _ => "?",
                }
            }
            (Some('#'), Some('#')) => {
                self.pos += 2;
                "##"
            }
            (Some('%'), Some('%')) => {
                self.pos += 2;
                "%%"
            }
            (Some('#'), _) => {
                self.pos += 1;
                "#"
            }
            (Some('%'), _) => {
                self.pos += 1;
                "%"
            }
            (None, _) => return Err(AllowlistError::Unterminated("${...}")),
            _ => return Err(refuse(self, start)),
        };
        if op.ends_with('=') && is_guarded(&name) {
            return Err(AllowlistError::GuardedAssignment(name));
        }
        body.push_str(op);
        loop {
            match self.peek() {
                Some('}') => {
                    self.pos += 1;
                    return Ok(body);
                }
                Some(c) if is_param_word_char(c) => {
                    body.push(c);
                    self.pos += 1;
                }
                None => return Err(AllowlistError::Unterminated("${...}")),
                Some(_) => return Err(refuse(self, start)),
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
