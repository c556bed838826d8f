//! `pincer`: the command-line front door and composition root.

fn main() {}
