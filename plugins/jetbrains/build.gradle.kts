// The plugin's conventional Gradle build (IntelliJ Platform Gradle Plugin 2.x).
// It compiles src/main/kotlin against the real platform; the compile-only
// stubs in stubs/src are for scripts/check.sh and are never part of it.
plugins {
    id("java")
    id("org.jetbrains.kotlin.jvm") version "2.1.20"
    id("org.jetbrains.intellij.platform") version "2.11.0"
}

group = providers.gradleProperty("pluginGroup").get()
version = providers.gradleProperty("pluginVersion").get()

kotlin {
    // The IntelliJ Platform runs on Java 21 since 2024.2.
    jvmToolchain(21)
}

repositories {
    mavenCentral()
    intellijPlatform {
        defaultRepositories()
    }
}

dependencies {
    intellijPlatform {
        create(providers.gradleProperty("platformType"), providers.gradleProperty("platformVersion"))
        // The terminal: LocalTerminalCustomizer, TerminalToolWindowManager.
        bundledPlugin("org.jetbrains.plugins.terminal")
        pluginVerifier()
        zipSigner()
    }
    testImplementation(kotlin("test"))
}

intellijPlatform {
    pluginConfiguration {
        version = providers.gradleProperty("pluginVersion")
        ideaVersion {
            sinceBuild = providers.gradleProperty("pluginSinceBuild")
            // No upper bound: the plugin verifier below checks new releases.
            untilBuild = provider { null }
        }
    }
    pluginVerification {
        ides {
            recommended()
        }
    }
    signing {
        certificateChain = providers.environmentVariable("CERTIFICATE_CHAIN")
        privateKey = providers.environmentVariable("PRIVATE_KEY")
        password = providers.environmentVariable("PRIVATE_KEY_PASSWORD")
    }
    publishing {
        token = providers.environmentVariable("PUBLISH_TOKEN")
    }
}

tasks {
    // The core's tests are a plain main() runner (no JUnit): they start the
    // real sidecar, so they need its path in GIC_BINARY.
    register<JavaExec>("coreTest") {
        group = "verification"
        description = "Runs the platform-free core's tests against the sidecar in GIC_BINARY."
        classpath = sourceSets["test"].runtimeClasspath
        mainClass = "com.github.geminiidecompanion.core.RunnerKt"
        workingDir = projectDir
        systemProperty("gic.pluginDir", projectDir.absolutePath)
        doFirst {
            check(!System.getenv("GIC_BINARY").isNullOrEmpty()) {
                "set GIC_BINARY to a built gemini-ide-companion (go build -o bin/gemini-ide-companion ./cmd/gemini-ide-companion)"
            }
        }
    }
}
