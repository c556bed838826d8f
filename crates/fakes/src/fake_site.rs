//! A fixture web site (TODO)
