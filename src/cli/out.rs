//! Standard output for the CLI's lines (`outln!`), and a closed pipe told from other errors.

/// One line on standard output; an error when it cannot be written (a closed pipe).
pub fn write_line(args: std::fmt::Arguments) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)?;
    out.write_all(b"\n")
}

/// Whether `err` is standard output (or another pipe) closed by its reader: `| head` has what
/// it wanted, and the command stops without a message, as Unix tools do.
pub fn stdout_closed(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            || matches!(
                c.downcast_ref::<lanes::base::error::Error>(),
                Some(lanes::base::error::Error::StdoutClosed)
            )
    })
}
