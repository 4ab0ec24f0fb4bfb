//! A tonic server and client on loopback, both running on weft through the tokio patch: one
//! unary call (`Say`) and one server-streaming call (`Count`), every reply checked. Prints
//! `grpc: ok` with a metric only weft has.

use std::pin::Pin;

use tokio_stream::wrappers::TcpListenerStream;
use tokio_stream::{Stream, StreamExt};
use tonic::{transport::Server, Request, Response, Status};

pub mod echo {
    tonic::include_proto!("echo");
}

use echo::echo_client::EchoClient;
use echo::echo_server::{Echo, EchoServer};
use echo::{CountRequest, Message};

struct Service;

#[tonic::async_trait]
impl Echo for Service {
    async fn say(&self, request: Request<Message>) -> Result<Response<Message>, Status> {
        Ok(Response::new(Message { text: format!("echo: {}", request.into_inner().text) }))
    }

    type CountStream = Pin<Box<dyn Stream<Item = Result<Message, Status>> + Send>>;

    async fn count(&self, request: Request<CountRequest>) -> Result<Response<Self::CountStream>, Status> {
        let up_to = request.into_inner().up_to;
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tokio::spawn(async move {
            for i in 1..=up_to {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                if tx.send(Ok(Message { text: i.to_string() })).await.is_err() {
                    return;
                }
            }
        });
        Ok(Response::new(Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(
        Server::builder().add_service(EchoServer::new(Service)).serve_with_incoming(TcpListenerStream::new(listener)),
    );

    let mut client = EchoClient::connect(format!("http://{addr}")).await?;
    let reply = client.say(Message { text: "hello".into() }).await?.into_inner();
    assert_eq!(reply.text, "echo: hello");

    let mut stream = client.count(CountRequest { up_to: 50 }).await?.into_inner();
    let mut got = Vec::new();
    while let Some(message) = stream.next().await {
        got.push(message?.text.parse::<u32>()?);
    }
    assert_eq!(got, (1..=50).collect::<Vec<_>>());

    let metrics = tokio::runtime::Handle::current().metrics();
    println!(
        "grpc: ok (unary + 50 streamed messages; weft runtime: {} workers, {} long polls)",
        metrics.num_workers(),
        metrics.long_poll_count()
    );
    Ok(())
}
