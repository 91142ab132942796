import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.HandlerRegistry;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A gRPC server on grpc-java's Netty transport, configured as Canton 3.5's Ledger API server
 * (LedgerApiServerConfig, LedgerApiKeepAliveServerConfig), that forwards every call, whatever its
 * method, to a backend gRPC server: the sandbox behind the server Canton really uses, so that
 * tests meet Netty's keepalive enforcement, header limits and GOAWAYs.
 *
 * <p>Options (durations in seconds, fractions allowed): --port (0: ephemeral), --backend
 * host:port, --max-connection-age, --max-connection-age-grace, --max-connection-idle,
 * --permit-keepalive-time, --keepalive-time, --keepalive-timeout, --max-inbound-metadata-size.
 * The bound port is stdout's first line. The process exits when its stdin closes, so that a test
 * runner that dies leaves no ledger behind.
 */
public final class NettyLedger {
  private static final int MIB = 1024 * 1024;

  /** Headers of the transport itself: each hop sets its own. */
  private static final Set<String> HOP_HEADERS =
      Set.of(
          "content-type",
          "te",
          "user-agent",
          "grpc-timeout",
          "grpc-encoding",
          "grpc-accept-encoding",
          "grpc-status",
          "grpc-message");

  private static final MethodDescriptor.Marshaller<byte[]> BYTES =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  public static void main(String[] args) throws Exception {
    Map<String, String> options = parse(args);
    String[] backend = options.getOrDefault("backend", "127.0.0.1:6865").split(":");
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(
                new InetSocketAddress(backend[0], Integer.parseInt(backend[1])))
            .usePlaintext()
            .maxInboundMessageSize(Integer.MAX_VALUE)
            .maxInboundMetadataSize(MIB)
            // A fixed window: no BDP pings toward the backend, and a paused client holds
            // the backend back after a known number of bytes.
            .flowControlWindow(MIB)
            .build();

    // Canton 3.5: ServerConfig.defaultMaxInboundMessageSize, LedgerApiServerConfig's
    // maxInboundMetadataSize (GrpcUtil.DEFAULT_MAX_HEADER_LIST_SIZE) and
    // LedgerApiKeepAliveServerConfig(10m, 20s, 10s, false).
    NettyServerBuilder builder =
        NettyServerBuilder.forAddress(
                new InetSocketAddress("127.0.0.1", Integer.parseInt(options.getOrDefault("port", "0"))))
            .fallbackHandlerRegistry(new ForwardingRegistry(channel))
            .maxInboundMessageSize(10 * MIB)
            .maxInboundMetadataSize(Integer.parseInt(options.getOrDefault("max-inbound-metadata-size", "8192")))
            .maxConcurrentCallsPerConnection(100_000)
            .keepAliveTime(nanos(options.getOrDefault("keepalive-time", "600")), TimeUnit.NANOSECONDS)
            .keepAliveTimeout(nanos(options.getOrDefault("keepalive-timeout", "20")), TimeUnit.NANOSECONDS)
            .permitKeepAliveTime(nanos(options.getOrDefault("permit-keepalive-time", "10")), TimeUnit.NANOSECONDS)
            .permitKeepAliveWithoutCalls(false);
    if (options.containsKey("max-connection-age"))
      builder.maxConnectionAge(nanos(options.get("max-connection-age")), TimeUnit.NANOSECONDS);
    if (options.containsKey("max-connection-age-grace"))
      builder.maxConnectionAgeGrace(nanos(options.get("max-connection-age-grace")), TimeUnit.NANOSECONDS);
    if (options.containsKey("max-connection-idle"))
      builder.maxConnectionIdle(nanos(options.get("max-connection-idle")), TimeUnit.NANOSECONDS);

    Server server = builder.build().start();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.shutdownNow();
                  channel.shutdownNow();
                }));
    System.out.println(server.getPort());
    System.out.flush();

    Thread stdin =
        new Thread(
            () -> {
              try {
                while (System.in.read() != -1) {}
              } catch (IOException ignored) {
                // A closed stdin ends the process as EOF does.
              }
              System.exit(0);
            });
    stdin.setDaemon(true);
    stdin.start();
    server.awaitTermination();
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> options = new HashMap<>();
    for (int i = 0; i < args.length; i += 2) {
      if (!args[i].startsWith("--") || i + 1 >= args.length)
        throw new IllegalArgumentException("expected --option value pairs, got " + String.join(" ", args));
      options.put(args[i].substring(2), args[i + 1]);
    }
    return options;
  }

  private static long nanos(String seconds) {
    return (long) (Double.parseDouble(seconds) * 1e9);
  }

  /** Any method name: a byte-level method forwarded to the backend. */
  private static final class ForwardingRegistry extends HandlerRegistry {
    private final ManagedChannel backend;
    private final Map<String, ServerMethodDefinition<byte[], byte[]>> methods = new ConcurrentHashMap<>();

    ForwardingRegistry(ManagedChannel backend) {
      this.backend = backend;
    }

    @Override
    public ServerMethodDefinition<?, ?> lookupMethod(String methodName, String authority) {
      return methods.computeIfAbsent(
          methodName,
          name ->
              ServerMethodDefinition.create(
                  MethodDescriptor.<byte[], byte[]>newBuilder()
                      .setType(MethodDescriptor.MethodType.UNKNOWN)
                      .setFullMethodName(name)
                      .setRequestMarshaller(BYTES)
                      .setResponseMarshaller(BYTES)
                      .build(),
                  new ForwardingHandler(backend)));
    }
  }

  private static final class ForwardingHandler implements ServerCallHandler<byte[], byte[]> {
    private final ManagedChannel backend;

    ForwardingHandler(ManagedChannel backend) {
      this.backend = backend;
    }

    @Override
    public ServerCall.Listener<byte[]> startCall(ServerCall<byte[], byte[]> serverCall, Metadata headers) {
      CallOptions options = CallOptions.DEFAULT;
      Deadline deadline = Context.current().getDeadline();
      if (deadline != null) options = options.withDeadline(deadline);
      ClientCall<byte[], byte[]> clientCall = backend.newCall(serverCall.getMethodDescriptor(), options);
      return new Relay(serverCall, clientCall, headers).clientSide;
    }
  }

  /**
   * One call relayed both ways. Each side asks for one message at a time, and only while the
   * other side can take it (isReady), so a consumer that stops reading stops the producer through
   * HTTP/2 flow control on both connections. ServerCall and ClientCall are not thread-safe and
   * their listeners run on different threads: every use of either holds the relay's lock.
   */
  private static final class Relay {
    private final ServerCall<byte[], byte[]> serverCall;
    private final ClientCall<byte[], byte[]> clientCall;
    private boolean serverClosed;
    private boolean clientCancelled;
    /** A message from the backend is owed a request once the client can take more. */
    private boolean backendRequestOwed;
    /** A message from the client is owed a request once the backend can take more. */
    private boolean clientRequestOwed;

    final ServerCall.Listener<byte[]> clientSide =
        new ServerCall.Listener<>() {
          @Override
          public void onMessage(byte[] message) {
            synchronized (Relay.this) {
              if (clientCancelled) return;
              clientCall.sendMessage(message);
              if (clientCall.isReady()) serverCall.request(1);
              else clientRequestOwed = true;
            }
          }

          @Override
          public void onHalfClose() {
            synchronized (Relay.this) {
              if (!clientCancelled) clientCall.halfClose();
            }
          }

          @Override
          public void onCancel() {
            synchronized (Relay.this) {
              serverClosed = true;
              if (clientCancelled) return;
              clientCancelled = true;
              clientCall.cancel("the client cancelled the call", null);
            }
          }

          @Override
          public void onReady() {
            synchronized (Relay.this) {
              if (backendRequestOwed && !serverClosed && serverCall.isReady()) {
                backendRequestOwed = false;
                clientCall.request(1);
              }
            }
          }
        };

    private final ClientCall.Listener<byte[]> backendSide =
        new ClientCall.Listener<>() {
          @Override
          public void onHeaders(Metadata headers) {
            synchronized (Relay.this) {
              if (!serverClosed) serverCall.sendHeaders(withoutHopHeaders(headers));
            }
          }

          @Override
          public void onMessage(byte[] message) {
            synchronized (Relay.this) {
              if (serverClosed) return;
              serverCall.sendMessage(message);
              if (serverCall.isReady()) clientCall.request(1);
              else backendRequestOwed = true;
            }
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            synchronized (Relay.this) {
              if (serverClosed) return;
              serverClosed = true;
              serverCall.close(status, withoutHopHeaders(trailers));
            }
          }

          @Override
          public void onReady() {
            synchronized (Relay.this) {
              if (clientRequestOwed && !clientCancelled && clientCall.isReady()) {
                clientRequestOwed = false;
                serverCall.request(1);
              }
            }
          }
        };

    Relay(ServerCall<byte[], byte[]> serverCall, ClientCall<byte[], byte[]> clientCall, Metadata headers) {
      this.serverCall = serverCall;
      this.clientCall = clientCall;
      synchronized (this) {
        clientCall.start(backendSide, withoutHopHeaders(headers));
        clientCall.request(1);
        serverCall.request(1);
      }
    }
  }

  /** A copy of `from` with every header but the transport's own, binary ones included. */
  private static Metadata withoutHopHeaders(Metadata from) {
    Metadata to = new Metadata();
    for (String name : from.keys()) {
      if (HOP_HEADERS.contains(name) || name.startsWith(":")) continue;
      if (name.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
        Metadata.Key<byte[]> key = Metadata.Key.of(name, Metadata.BINARY_BYTE_MARSHALLER);
        for (byte[] value : from.getAll(key)) to.put(key, value);
      } else {
        Metadata.Key<String> key = Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
        for (String value : from.getAll(key)) to.put(key, value);
      }
    }
    return to;
  }
}
