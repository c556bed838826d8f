//! An offline embedder: a model2vec model loaded from a local directory (work in progress).
