//! Generates the gRPC server and client from `proto/echo.proto` (needs `protoc`).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tonic_prost_build::compile_protos("proto/echo.proto")?;
    Ok(())
}
