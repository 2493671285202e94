//! The `lanes` binary: parse flags, run one subcommand, print `lanes: {err:#}` and exit 2 on error.

mod cli;

fn main() {
    // Keep FFmpeg's own log lines off stderr: errors are reported once, as `lanes: ...`.
    if std::env::var_os("OPENCV_FFMPEG_LOGLEVEL").is_none() {
        std::env::set_var("OPENCV_FFMPEG_LOGLEVEL", "-8");
    }
    let code = match cli::run() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("lanes: {err:#}");
            2
        }
    };
    std::process::exit(code);
}
