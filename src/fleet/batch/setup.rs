//! `Setup`: the config, camera, their hashes and one `Pipeline` per frame size, shared by a
//! batch's videos.

use super::plan::fnv1a64;
use crate::base::camera::Camera;
use crate::base::config::{Config, Preset};
use crate::base::error::{Error, Result};
use crate::lane::pipeline::Pipeline;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Process-wide set-up shared by every video: the config, the camera, their fingerprints and
/// one `Pipeline` per frame size (remap maps built once; the B table is process-wide anyway).
pub struct Setup {
    pub cfg: Config,
    pub camera: Option<Camera>,
    /// FNV-1a of the camera file's bytes ("none" without a camera).
    pub camera_hash: String,
    /// FNV-1a of the resolved configuration (preset and file merged) as JSON.
    pub config_hash: String,
    pipelines: Mutex<HashMap<(i32, i32, u64), Arc<Pipeline>>>,
    /// Find each video's road geometry in the video itself (the config names no
    /// `[perspective]`), as `lanes video` does; else every video uses the config's.
    pub find_geometry: bool,
    /// The camera and config files this set-up was loaded from (shown in the index).
    pub camera_file: Option<PathBuf>,
    pub config_file: Option<PathBuf>,
}

impl Setup {
    /// A set-up from a validated config and an optional camera with the file it came from.
    pub fn new(cfg: Config, camera: Option<(Camera, &Path)>) -> Result<Self> {
        let camera_file = camera.as_ref().map(|(_, p)| p.to_path_buf());
        let camera_hash = match &camera {
            Some((_, p)) => {
                let bytes = std::fs::read(p).map_err(|e| Error::Io {
                    path: p.to_path_buf(),
                    message: e.to_string(),
                })?;
                format!("{:016x}", fnv1a64(&bytes))
            }
            None => "none".to_string(),
        };
        let json = serde_json::to_string(&cfg).map_err(|e| Error::Invalid(e.to_string()))?;
        Ok(Self {
            config_hash: format!("{:016x}", fnv1a64(json.as_bytes())),
            cfg,
            camera: camera.map(|(c, _)| c),
            camera_hash,
            pipelines: Mutex::new(HashMap::new()),
            find_geometry: false,
            camera_file,
            config_file: None,
        })
    }

    /// Load the camera and config files (config keys over `preset`), as the CLI does.
    pub fn load(camera: Option<&Path>, config: Option<&Path>, preset: Preset) -> Result<Self> {
        let cfg = Config::load_over(config, preset)?;
        let cam = camera
            .map(|p| Camera::load(p).map(|c| (c, p)))
            .transpose()?;
        Self::new(cfg, cam)?.geometry_from(config)
    }

    /// Find each video's geometry unless the config file names `[perspective]`.
    pub fn geometry_from(mut self, config: Option<&Path>) -> Result<Self> {
        self.config_file = config.map(Path::to_path_buf);
        self.find_geometry = match config {
            Some(p) => !Config::file_names_section(p, "perspective")?,
            None => true,
        };
        Ok(self)
    }

    /// The pipeline for frames of this size and pixel shape (`Pipeline::with_pixel_aspect`),
    /// built on first use.
    pub fn pipeline(&self, width: i32, height: i32, pixel_aspect: f64) -> Result<Arc<Pipeline>> {
        let mut map = self
            .pipelines
            .lock()
            .map_err(|_| Error::Invalid("pipeline cache poisoned".into()))?;
        let key = (width, height, pixel_aspect.to_bits());
        if let Some(p) = map.get(&key) {
            return Ok(Arc::clone(p));
        }
        let p = Arc::new(
            Pipeline::new(self.cfg.clone(), self.camera.as_ref(), width, height)?
                .with_pixel_aspect(pixel_aspect),
        );
        map.insert(key, Arc::clone(&p));
        Ok(p)
    }
}
