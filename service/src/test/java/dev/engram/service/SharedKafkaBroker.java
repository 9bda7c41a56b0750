package dev.engram.service;

import dev.engram.service.app.EmbeddedKafkaBroker;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * One real embedded KRaft broker per test JVM, started on first use and stopped when the JVM's tests end. Tests
 * isolate themselves with unique topic prefixes and application ids.
 */
public final class SharedKafkaBroker implements BeforeAllCallback, ParameterResolver {

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(SharedKafkaBroker.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        broker(context);
    }

    private static EmbeddedKafkaBroker broker(ExtensionContext context) {
        return context.getRoot()
                .getStore(NS)
                .getOrComputeIfAbsent("broker", k -> new Holder(EmbeddedKafkaBroker.startTemporary()), Holder.class)
                .broker();
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == EmbeddedKafkaBroker.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return broker(context);
    }

    private record Holder(EmbeddedKafkaBroker broker) implements ExtensionContext.Store.CloseableResource {
        @Override
        public void close() {
            broker.close();
        }
    }
}
