rootProject.name = "gemini-companion-jetbrains"

plugins {
    // Lets Gradle provision the JDK 21 toolchain the build asks for.
    id("org.gradle.toolchains.foojay-resolver-convention") version "0.8.0"
}
