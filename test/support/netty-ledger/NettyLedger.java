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
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A gRPC server on grpc-java's Netty transport, configured as Canton 3.5's Ledger API server
 * (LedgerApiServerConfig, LedgerApiKeepAliveServerConfig), that forwards every call, whatever its
 * method, to a backend gRPC server: the sandbox behind the server Canton really uses, so that
 * tests meet Netty's keepalive enforcement, header limits and GOAWAYs.
 *
 * <p>Options (durations in seconds, fractions allowed): --port (0: ephemeral), --backend
 * host:port, --max-connection-age, --max-connection-age-grace, --max-connection-idle,
 * --permit-keepalive-time, --keepalive-time, --keepalive-timeout, --max-inbound-metadata-size,
 * --user-rights-check-interval (absent: no checks; see UserRightsCheck). The bound port is stdout's
 * first line. The process exits when its stdin closes, so that a test runner that dies leaves no
 * ledger behind.
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
    UserRightsCheck rightsCheck =
        options.containsKey("user-rights-check-interval")
            ? new UserRightsCheck(channel, nanos(options.get("user-rights-check-interval")))
            : null;
    NettyServerBuilder builder =
        NettyServerBuilder.forAddress(
                new InetSocketAddress("127.0.0.1", Integer.parseInt(options.getOrDefault("port", "0"))))
            .fallbackHandlerRegistry(new ForwardingRegistry(channel, rightsCheck))
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
    private final UserRightsCheck rightsCheck;
    private final Map<String, ServerMethodDefinition<byte[], byte[]>> methods = new ConcurrentHashMap<>();

    ForwardingRegistry(ManagedChannel backend, UserRightsCheck rightsCheck) {
      this.backend = backend;
      this.rightsCheck = rightsCheck;
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
                  new ForwardingHandler(
                      backend, UserRightsCheck.STREAMS.contains(name) ? rightsCheck : null)));
    }
  }

  private static final class ForwardingHandler implements ServerCallHandler<byte[], byte[]> {
    private final ManagedChannel backend;
    /** Set for the Ledger API's streams when the ledger checks their users' rights. */
    private final UserRightsCheck rightsCheck;

    ForwardingHandler(ManagedChannel backend, UserRightsCheck rightsCheck) {
      this.backend = backend;
      this.rightsCheck = rightsCheck;
    }

    @Override
    public ServerCall.Listener<byte[]> startCall(ServerCall<byte[], byte[]> serverCall, Metadata headers) {
      CallOptions options = CallOptions.DEFAULT;
      Deadline deadline = Context.current().getDeadline();
      if (deadline != null) options = options.withDeadline(deadline);
      ClientCall<byte[], byte[]> clientCall = backend.newCall(serverCall.getMethodDescriptor(), options);
      Relay relay = new Relay(serverCall, clientCall, headers);
      if (rightsCheck == null) relay.start();
      else rightsCheck.watch(relay, headers);
      return relay.clientSide;
    }
  }

  /**
   * Canton's UserBasedOngoingAuthorization (with UserRightsChangeAsyncChecker) for the Ledger API's
   * streams: the rights of the stream's user are read when the call is authorized, before it
   * starts, and again every interval (Canton: user-management-service's
   * cache-expiry-after-write-in-seconds, 5 s by default); once they differ from the first, or the
   * user cannot be read (deleted, deactivated), the stream ends with STALE_STREAM_AUTHORIZATION and
   * its backend call is cancelled. As in Canton, only a token that resolves to a user is checked.
   *
   * <p>Canton reads its user store; this front reads the backend's, with ListUserRights for the
   * token's own user (an empty user id), so a refusal of the token itself (UNAUTHENTICATED: it
   * expired) says nothing about the rights and is left to the backend, which ends the stream at
   * the token's expiry as Canton does. Canton's safety switch (a stream ends when no check
   * completed within twice the interval) is not copied: a loaded test machine would trip it.
   */
  private static final class UserRightsCheck {
    static final Set<String> STREAMS =
        Set.of(
            "com.daml.ledger.api.v2.UpdateService/GetUpdates",
            "com.daml.ledger.api.v2.CommandCompletionService/CompletionStream",
            "com.daml.ledger.api.v2.StateService/GetActiveContracts");

    private static final MethodDescriptor<byte[], byte[]> LIST_USER_RIGHTS =
        MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName("com.daml.ledger.api.v2.admin.UserManagementService/ListUserRights")
            .setRequestMarshaller(BYTES)
            .setResponseMarshaller(BYTES)
            .build();

    private static final Metadata.Key<String> AUTHORIZATION =
        Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    private final ManagedChannel backend;
    private final long intervalNanos;
    private final ScheduledExecutorService clock =
        Executors.newSingleThreadScheduledExecutor(
            task -> {
              Thread thread = new Thread(task, "user-rights-check");
              thread.setDaemon(true);
              return thread;
            });

    UserRightsCheck(ManagedChannel backend, long intervalNanos) {
      this.backend = backend;
      this.intervalNanos = intervalNanos;
    }

    /** Starts the relay once the user's rights are known (or known not to be a user's), then checks them. */
    void watch(Relay relay, Metadata headers) {
      String authorization = headers.get(AUTHORIZATION);
      if (authorization == null) {
        relay.start();
        return;
      }
      rightsOf(authorization)
          .whenComplete(
              (original, failure) -> {
                relay.start();
                if (failure == null) next(relay, authorization, original);
              });
    }

    private void next(Relay relay, String authorization, Set<String> original) {
      clock.schedule(() -> check(relay, authorization, original), intervalNanos, TimeUnit.NANOSECONDS);
    }

    private void check(Relay relay, String authorization, Set<String> original) {
      if (relay.ended()) return;
      rightsOf(authorization)
          .whenComplete(
              (now, failure) -> {
                boolean stale =
                    failure == null
                        ? !now.equals(original)
                        : Status.fromThrowable(failure).getCode() != Status.Code.UNAUTHENTICATED;
                if (stale) StaleStreamAuthorization.end(relay);
                else next(relay, authorization, original);
              });
    }

    /** The token's user's rights, each as its encoded Right; fails with the backend's status. */
    private CompletableFuture<Set<String>> rightsOf(String authorization) {
      CompletableFuture<Set<String>> answer = new CompletableFuture<>();
      Metadata headers = new Metadata();
      headers.put(AUTHORIZATION, authorization);
      ClientCall<byte[], byte[]> call = backend.newCall(LIST_USER_RIGHTS, CallOptions.DEFAULT);
      call.start(
          new ClientCall.Listener<>() {
            private byte[] response;

            @Override
            public void onMessage(byte[] message) {
              response = message;
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              if (status.isOk() && response != null) answer.complete(Proto.lengthDelimited(response, 1));
              else answer.completeExceptionally(status.asRuntimeException(trailers));
            }
          },
          headers);
      call.request(2);
      // ListUserRightsRequest with no user id: the authenticated user.
      call.sendMessage(new byte[0]);
      call.halfClose();
      return answer;
    }
  }

  /**
   * Canton's AuthorizationChecksErrors.StaleUserManagementBasedStreamClaims as Canton puts it on
   * the wire: ABORTED (category ContentionOnSharedResources, 2), message `ID(2,tid): cause`, and a
   * google.rpc.Status in grpc-status-details-bin with its ErrorInfo, RetryInfo (retry at once)
   * and RequestInfo.
   */
  private static final class StaleStreamAuthorization {
    private static final String ID = "STALE_STREAM_AUTHORIZATION";
    private static final String CAUSE = "Stale stream authorization. Retry quickly.";
    private static final Metadata.Key<byte[]> DETAILS =
        Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);
    private static final SecureRandom RANDOM = new SecureRandom();

    static void end(Relay relay) {
      byte[] id = new byte[16];
      RANDOM.nextBytes(id);
      String tid = HexFormat.of().formatHex(id);
      String message = ID + "(2," + tid.substring(0, 8) + "): " + CAUSE;
      byte[] errorInfo =
          new Proto()
              .string(1, ID)
              .entry(3, "category", "2")
              .entry(3, "definite_answer", "false")
              .entry(3, "tid", tid)
              .bytes();
      // retry_delay: a Duration of 0 s (all its fields default).
      byte[] retryInfo = new Proto().message(1, new byte[0]).bytes();
      byte[] requestInfo = new Proto().string(1, tid).bytes();
      byte[] status =
          new Proto()
              .varint(1, Status.Code.ABORTED.value())
              .string(2, message)
              .message(3, any("google.rpc.ErrorInfo", errorInfo))
              .message(3, any("google.rpc.RetryInfo", retryInfo))
              .message(3, any("google.rpc.RequestInfo", requestInfo))
              .bytes();
      Metadata trailers = new Metadata();
      trailers.put(DETAILS, status);
      relay.abort(Status.ABORTED.withDescription(message), trailers);
    }

    private static byte[] any(String type, byte[] value) {
      return new Proto().string(1, "type.googleapis.com/" + type).message(2, value).bytes();
    }
  }

  /** The few protobuf wire rules the checks need: writing the error's messages, reading a repeated field. */
  private static final class Proto {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    Proto varint(int field, long value) {
      raw((long) field << 3);
      raw(value);
      return this;
    }

    Proto message(int field, byte[] value) {
      raw(((long) field << 3) | 2);
      raw(value.length);
      out.writeBytes(value);
      return this;
    }

    Proto string(int field, String value) {
      return message(field, value.getBytes(StandardCharsets.UTF_8));
    }

    /** A map<string, string> entry. */
    Proto entry(int field, String key, String value) {
      return message(field, new Proto().string(1, key).string(2, value).bytes());
    }

    byte[] bytes() {
      return out.toByteArray();
    }

    private void raw(long value) {
      while ((value & ~0x7FL) != 0) {
        out.write((int) ((value & 0x7F) | 0x80));
        value >>>= 7;
      }
      out.write((int) value);
    }

    /** The values of a length-delimited `field` of `message`, hex-encoded, as a set. */
    static Set<String> lengthDelimited(byte[] message, int field) {
      Set<String> values = new HashSet<>();
      int[] at = {0};
      while (at[0] < message.length) {
        long tag = readVarint(message, at);
        int wireType = (int) (tag & 7);
        switch (wireType) {
          case 0 -> readVarint(message, at);
          case 1 -> at[0] += 8;
          case 5 -> at[0] += 4;
          case 2 -> {
            int length = (int) readVarint(message, at);
            if (tag >>> 3 == field)
              values.add(HexFormat.of().formatHex(message, at[0], at[0] + length));
            at[0] += length;
          }
          default -> throw new IllegalArgumentException("wire type " + wireType);
        }
      }
      return values;
    }

    private static long readVarint(byte[] message, int[] at) {
      long value = 0;
      for (int shift = 0; ; shift += 7) {
        byte b = message[at[0]++];
        value |= (long) (b & 0x7F) << shift;
        if ((b & 0x80) == 0) return value;
      }
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
    private final Metadata headers;
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
      this.headers = headers;
    }

    /**
     * Opens the backend call and takes the client's request: nothing of the client's reaches the
     * relay before (it asks for no message), so a call can wait here for its authorization.
     */
    void start() {
      synchronized (this) {
        if (clientCancelled) return;
        clientCall.start(backendSide, withoutHopHeaders(headers));
        clientCall.request(1);
        serverCall.request(1);
      }
    }

    /** The client's call is over: closed by either side, or cancelled. */
    boolean ended() {
      synchronized (this) {
        return serverClosed;
      }
    }

    /** Ends the client's call with `status` and cancels the backend's, as a ledger aborts a stream. */
    void abort(Status status, Metadata trailers) {
      synchronized (this) {
        if (serverClosed) return;
        serverClosed = true;
        serverCall.close(status, trailers);
        if (clientCancelled) return;
        clientCancelled = true;
        clientCall.cancel("the ledger aborted the stream", null);
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
