//! The live threshold tuner: previews of many stills under one parameter set, an HTTP server
//! with an embedded page to edit the parameters, and a headless sweep to a contact sheet.

pub mod params;
pub mod preview;
pub mod server;
pub mod sweep;

pub use params::{apply_params, set_param, toml_diff, ParamSpec, SPECS};
pub use preview::{StillPreview, Tuner};
pub use server::{App, Server};
pub use sweep::{contact_sheet, Show, Sweep};
