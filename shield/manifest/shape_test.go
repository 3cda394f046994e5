package manifest

import (
	"strings"
	"testing"
)

// shapeCases are changes to build files Shield has no parser for, in
// several ecosystems, and the kind of change each must report ("" for
// none).
var shapeCases = []struct {
	name, path, before, after, want string
}{
	{"gradle repo added", "build.gradle", "repositories {\n    mavenCentral()\n}\n", "repositories {\n    mavenCentral()\n    maven { url 'https://repo.fastbuild.example/maven2' }\n}\n", KindSource},
	{"gradle version bump", "build.gradle", "dependencies {\n    implementation 'com.google.guava:guava:33.0.0-jre'\n}\n", "dependencies {\n    implementation 'com.google.guava:guava:33.1.0-jre'\n}\n", ""},
	{"gradle new dep", "build.gradle.kts", "dependencies {\n    implementation(\"com.google.guava:guava:33.0.0-jre\")\n}\n", "dependencies {\n    implementation(\"com.google.guava:guava:33.0.0-jre\")\n    testImplementation(\"org.junit.jupiter:junit-jupiter:5.10.2\")\n}\n", ""},
	{"gradle insecure", "settings.gradle.kts", "pluginManagement {\n  repositories { gradlePluginPortal() }\n}\n", "pluginManagement {\n  repositories { gradlePluginPortal()\n    maven { url = uri(\"http://nexus.corp.example/plugins\"); isAllowInsecureProtocol = true } }\n}\n", KindSource},
	{"wrapper host", "gradle/wrapper/gradle-wrapper.properties", "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.5-bin.zip\ndistributionSha256Sum=9d926787066a081739e8200858338b4a69e837c3a821a33aca9db09dd4a41026\n", "distributionUrl=https\\://dl.gradle-mirror.example/distributions/gradle-8.5-bin.zip\ndistributionSha256Sum=9d926787066a081739e8200858338b4a69e837c3a821a33aca9db09dd4a41026\n", KindSource},
	{"wrapper bump", "gradle/wrapper/gradle-wrapper.properties", "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.5-bin.zip\ndistributionSha256Sum=9d926787066a081739e8200858338b4a69e837c3a821a33aca9db09dd4a41026\n", "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.6-bin.zip\ndistributionSha256Sum=1e6cdc8f0c1cd9e5c4f7dfe2e9d5a4b6c85c2ffa0a2f0d65a0ce7b9ec1c4f7a1\n", ""},
	{"wrapper checksum dropped", ".mvn/wrapper/maven-wrapper.properties", "distributionUrl=https://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/3.9.6/apache-maven-3.9.6-bin.zip\ndistributionSha256Sum=6eedd2cae3626d6ad3a5c9ee324bd265853d64297f07f033430755bd0e0c3a4b\n", "distributionUrl=https://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/3.9.6/apache-maven-3.9.6-bin.zip\n", KindChecksum},
	{"verification off", "gradle.properties", "org.gradle.jvmargs=-Xmx2g\n", "org.gradle.jvmargs=-Xmx2g\norg.gradle.dependency.verification=off\n", KindChecksum},
	{"maven repositories", "pom.xml", "<project>\n  <url>https://example.org/app</url>\n  <dependencies>\n  </dependencies>\n</project>\n", "<project>\n  <url>https://example.org/app</url>\n  <repositories>\n    <repository>\n      <id>extra</id>\n      <url>https://maven.pkgs-cache.example/releases</url>\n    </repository>\n  </repositories>\n  <dependencies>\n  </dependencies>\n</project>\n", KindSource},
	{"maven homepage", "pom.xml", "<project>\n  <name>app</name>\n</project>\n", "<project>\n  <name>app</name>\n  <url>https://docs.example.org/app</url>\n</project>\n", ""},
	{"nuget feed", "NuGet.Config", "<configuration>\n  <packageSources>\n    <add key=\"nuget.org\" value=\"https://api.nuget.org/v3/index.json\" />\n  </packageSources>\n</configuration>\n", "<configuration>\n  <packageSources>\n    <add key=\"nuget.org\" value=\"https://api.nuget.org/v3/index.json\" />\n    <add key=\"fast\" value=\"https://nuget.fastfeed.example/v3/index.json\" />\n  </packageSources>\n</configuration>\n", KindSource},
	{"composer vcs", "composer.json", "{\n  \"require\": {\n    \"monolog/monolog\": \"^3.5\"\n  }\n}\n", "{\n  \"repositories\": [{\"type\": \"vcs\", \"url\": \"https://github.com/monolog-fork/monolog\"}],\n  \"require\": {\n    \"monolog/monolog\": \"^3.5\"\n  }\n}\n", KindSource},
	{"composer secure-http", "composer.json", "{\n  \"config\": {\n    \"sort-packages\": true\n  }\n}\n", "{\n  \"config\": {\n    \"sort-packages\": true,\n    \"secure-http\": false\n  }\n}\n", KindSource},
	{"terraform module git", "infra/main.tf", "module \"vpc\" {\n  source  = \"terraform-aws-modules/vpc/aws\"\n  version = \"5.5.1\"\n}\n", "module \"vpc\" {\n  source  = \"git::https://git.infra-mods.example/vpc.git?ref=main\"\n}\n", KindSource},
	{"terraform namespace", "infra/versions.tf", "terraform {\n  required_providers {\n    aws = {\n      source  = \"hashicorp/aws\"\n      version = \"~> 5.0\"\n    }\n  }\n}\n", "terraform {\n  required_providers {\n    aws = {\n      source  = \"hashic0rp-labs/aws\"\n      version = \"~> 5.0\"\n    }\n  }\n}\n", KindSource},
	{"terraform bump", "infra/versions.tf", "    aws = {\n      source  = \"hashicorp/aws\"\n      version = \"~> 5.30\"\n    }\n", "    aws = {\n      source  = \"hashicorp/aws\"\n      version = \"~> 5.31\"\n    }\n", ""},
	{"terraform external", "infra/data.tf", "locals {\n  env = \"prod\"\n}\n", "locals {\n  env = \"prod\"\n}\ndata \"external\" \"whoami\" {\n  program = [\"bash\", \"${path.module}/x.sh\"]\n}\n", KindRuns},
	{"terraform guard off", "infra/db.tf", "resource \"aws_db_instance\" \"main\" {\n  deletion_protection = true\n}\n", "resource \"aws_db_instance\" \"main\" {\n  deletion_protection = false\n}\n", KindDestroy},
	{"terraform prevent_destroy removed", "infra/state.tf", "resource \"aws_s3_bucket\" \"state\" {\n  lifecycle {\n    prevent_destroy = true\n  }\n}\n", "resource \"aws_s3_bucket\" \"state\" {\n}\n", KindDestroy},
	{"tf lock hash swap", ".terraform.lock.hcl", "provider \"registry.terraform.io/hashicorp/aws\" {\n  version = \"5.31.0\"\n  hashes = [\n    \"h1:abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG=\",\n  ]\n}\n", "provider \"registry.terraform.io/hashicorp/aws\" {\n  version = \"5.31.0\"\n  hashes = [\n    \"h1:ZZZZefghijklmnopqrstuvwxyz0123456789ABCDEFG=\",\n  ]\n}\n", KindChecksum},
	{"tf lock upgrade", ".terraform.lock.hcl", "provider \"registry.terraform.io/hashicorp/aws\" {\n  version = \"5.31.0\"\n  hashes = [\n    \"h1:abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG=\",\n  ]\n}\n", "provider \"registry.terraform.io/hashicorp/aws\" {\n  version = \"5.32.0\"\n  hashes = [\n    \"h1:ZZZZefghijklmnopqrstuvwxyz0123456789ABCDEFG=\",\n  ]\n}\n", ""},
	{"helm chart repo", "charts/api/Chart.yaml", "dependencies:\n  - name: redis\n    version: 18.6.1\n    repository: https://charts.bitnami.com/bitnami\n", "dependencies:\n  - name: redis\n    version: 18.6.1\n    repository: https://charts.bitnarni-mirror.example/bitnami\n", KindSource},
	{"helm bump", "charts/api/Chart.yaml", "dependencies:\n  - name: redis\n    version: 18.6.1\n    repository: https://charts.bitnami.com/bitnami\n", "dependencies:\n  - name: redis\n    version: 18.6.2\n    repository: https://charts.bitnami.com/bitnami\n", ""},
	{"galaxy git role", "requirements.yml", "roles:\n  - name: geerlingguy.docker\n    version: 7.1.0\n", "roles:\n  - name: geerlingguy.docker\n    version: 7.1.0\n  - src: git+https://git.role-hub.example/ops/hardening.git\n", KindSource},
	{"jvm agent", ".mvn/jvm.config", "-Xmx2g\n", "-Xmx2g\n-javaagent:/tmp/a.jar\n", KindRuns},
	{"maven extension", ".mvn/extensions.xml", "<extensions>\n</extensions>\n", "<extensions>\n  <extension>\n    <groupId>io.fastbuild</groupId>\n    <artifactId>cache-ext</artifactId>\n    <version>1.0</version>\n  </extension>\n</extensions>\n", KindRuns},
	{"gradle exec hook", "build.gradle", "plugins { id 'java' }\n", "plugins { id 'java' }\ncompileJava.doFirst { 'sh ./tools/x.sh'.execute() }\n", KindRuns},
	{"rspec require", ".rspec", "--format documentation\n", "--format documentation\n--require ./spec/support/boot\n", KindRuns},
	{"rubocop require", ".rubocop.yml", "AllCops:\n  NewCops: enable\n", "require:\n  - ./lib/cops/loader.rb\nAllCops:\n  NewCops: enable\n", KindRuns},
	{"gitleaks allow all", ".gitleaks.toml", "[extend]\nuseDefault = true\n", "[extend]\nuseDefault = true\n[allowlist]\nregexes = ['''^.*$''']\n", KindChecks},
	{"gitleaks allow one", ".gitleaks.toml", "[extend]\nuseDefault = true\n", "[extend]\nuseDefault = true\n[allowlist]\npaths = ['''testdata/fixtures\\.json''']\n", ""},
	{"rspec default", ".rspec", "", "--require spec_helper\n--format documentation\n", ""},
	{"rubocop plugin gem", ".rubocop.yml", "AllCops:\n  NewCops: enable\n", "plugins:\n  - rubocop-rails\nAllCops:\n  NewCops: enable\n", ""},
	{"ansible callback", "ansible.cfg", "[defaults]\ninventory = hosts\n", "[defaults]\ninventory = hosts\ncallback_plugins = /tmp/cb\n", KindRuns},
	{"ignoreFailures", "build.gradle", "test {\n    useJUnitPlatform()\n}\n", "test {\n    useJUnitPlatform()\n    ignoreFailures = true\n}\n", KindChecks},
	{"cvss raised", "build.gradle", "dependencyCheck {\n    failBuildOnCVSS = 7\n}\n", "dependencyCheck {\n    failBuildOnCVSS = 11\n}\n", KindChecks},
	{"maven skip", "pom.xml", "<properties>\n  <java.version>21</java.version>\n</properties>\n", "<properties>\n  <java.version>21</java.version>\n  <maven.test.skip>true</maven.test.skip>\n</properties>\n", KindChecks},
	{"linter exclude all", ".golangci.yml", "run:\n  timeout: 5m\n", "run:\n  timeout: 5m\nissues:\n  exclude-dirs:\n    - \"**\"\n", KindChecks},
	{"linter timeout", ".golangci.yml", "run:\n  timeout: 5m\n", "run:\n  timeout: 10m\n", ""},
	{"gitattributes hide", ".gitattributes", "*.png binary\n", "*.png binary\n*.go -diff\n", KindChecks},
	{"gitattributes filter", ".gitattributes", "*.png binary\n", "*.png binary\n*.env filter=crypt\n", KindRuns},
	{"gitattributes eol", ".gitattributes", "*.png binary\n", "*.png binary\n*.sh text eol=lf\n", ""},
	{"lookalike plugin", "build.gradle.kts", "plugins {\n    id(\"org.jetbrains.kotlin.jvm\") version \"1.9.22\"\n}\n", "plugins {\n    id(\"org.jetbrains.kotlin.jvm\") version \"1.9.22\"\n    id(\"org.jetbrains.kotIin.plugin.spring\") version \"1.9.22\"\n}\n", KindSource},
	{"nix fetch", "flake.nix", "{\n  inputs.nixpkgs.url = \"github:NixOS/nixpkgs/nixos-23.11\";\n}\n", "{\n  inputs.nixpkgs.url = \"github:NixOS/nixpkgs/nixos-23.11\";\n  inputs.tools.url = \"https://tarballs.nix-cache.example/tools.tar.gz\";\n}\n", KindSource},
	{"cmake fetchcontent", "CMakeLists.txt", "project(app)\n", "project(app)\nFetchContent_Declare(fmt URL https://pkgs.cpp-mirror.example/fmt-10.2.1.zip)\n", KindSource},
	{"swiftpm", "Package.swift", "dependencies: [\n    .package(url: \"https://github.com/apple/swift-log.git\", from: \"1.5.0\"),\n]\n", "dependencies: [\n    .package(url: \"https://github.com/apple/swift-log.git\", from: \"1.5.4\"),\n]\n", ""},
	{"swiftpm fork", "Package.swift", "dependencies: [\n    .package(url: \"https://github.com/apple/swift-log.git\", from: \"1.5.0\"),\n]\n", "dependencies: [\n    .package(url: \"https://github.com/app1e/swift-log.git\", from: \"1.5.0\"),\n]\n", KindSource},
	{"trivyignore", ".trivyignore", "", "CVE-2024-1234\n", KindChecks},
	// An attacker's evasions of the shape: a URL glued from pieces, read
	// from the environment or a property, or decoded.
	{"url glued", "build.gradle.kts", "repositories {\n}\n", "repositories {\n    maven { url = uri(\"https://\" + host + \"/m2\") }\n}\n", KindSource},
	{"url from env", "build.gradle.kts", "repositories {\n}\n", "repositories {\n    maven { url = uri(System.getenv(\"REPO\")) }\n}\n", KindSource},
	{"url decoded", "build.gradle", "repositories {\n}\n", "repositories {\n    maven { url new String(Base64.decoder.decode('aHR0cHM6Ly94')) }\n}\n", KindSource},
	{"interpolated host", "pom.xml", "<project>\n</project>\n", "<project>\n  <repositories><repository><url>https://${repo.host}/m2</url></repository></repositories>\n</project>\n", KindSource},
}

func TestDiffShape_Cases(t *testing.T) {
	for _, c := range shapeCases {
		var before []byte
		if c.before != "" {
			before = []byte(c.before)
		}
		if Format(c.path) != ShapeFormat {
			t.Errorf("%s: Format(%s) = %q", c.name, c.path, Format(c.path))
			continue
		}
		cs, err := Diff(c.path, before, []byte(c.after))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := ""
		var all []string
		for _, ch := range cs {
			all = append(all, ch.Kind+" "+ch.Key+": "+ch.Detail)
			if got == "" || ch.Kind == c.want {
				got = ch.Kind
			}
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q\n  %s", c.name, got, c.want, strings.Join(all, "\n  "))
		}
	}
}
