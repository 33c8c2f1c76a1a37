//! limit-break-memory: the pure core of dsh-limit-break's fact memory (work in progress).
