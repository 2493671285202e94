//! The `lanes` binary: parse flags, run one subcommand, print `lanes: {err:#}` and exit 2 on error.

mod cli;

fn main() {
    lanes::base::frame::keep_frame_buffers_in_the_heap();
    // A write past `ulimit -f` fails with EFBIG (reported, partial file removed) instead of
    // killing the process.
    lanes::base::cancel::ignore_file_size_signal();
    // Keep FFmpeg's own log lines off stderr: errors are reported once, as `lanes: ...`.
    if std::env::var_os("OPENCV_FFMPEG_LOGLEVEL").is_none() {
        std::env::set_var("OPENCV_FFMPEG_LOGLEVEL", "-8");
    }
    let code = match cli::run() {
        Ok(code) => code,
        // The reader of a pipe closed it (`| head`): it has what it wanted; 141 is the status
        // a shell reports for a tool that SIGPIPE stopped, so `set -o pipefail` scripts see it.
        Err(err) if cli::out::stdout_closed(&err) => 141,
        Err(err) => {
            eprintln!("lanes: {err:#}");
            2
        }
    };
    if std::env::var_os("LANES_PRINT_PEAK_RSS").is_some() {
        // For `lanes bench`: the process's peak resident set size, from the kernel.
        if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
            if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
                eprintln!(
                    "peak_rss_kb: {}",
                    line.trim_start_matches("VmHWM:")
                        .trim()
                        .trim_end_matches(" kB")
                );
            }
        }
    }
    std::process::exit(code);
}
