//! Builds `csrc/jpeg.c`, the JPEG codec on the system's libjpeg (libjpeg-turbo): the stills'
//! reader and writer without OpenCV's imgcodecs, whose dependencies (GDAL, HDF5, Poppler, ...)
//! cost every start of the binary about 90 ms of dynamic linking.

fn main() {
    println!("cargo:rerun-if-changed=csrc/jpeg.c");
    cc::Build::new()
        .file("csrc/jpeg.c")
        .warnings(true)
        .flag_if_supported("-Wno-clobbered")
        .compile("lanes_jpeg");
    println!("cargo:rustc-link-lib=jpeg");
}
