package integration

// Checks on deploy/: the Kubernetes manifests, the compose file and the
// Dockerfile must parse and keep the settings a running fleet depends on
// (probe paths, non-root, secret wiring, the migrate-before-serve order).
// Every check reports findings instead of failing directly, so
// TestDeployChecksCatchMistakes can prove each one fails on a broken tree.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lectern/lectern/adminapi/s3files"
	"github.com/lectern/lectern/internal/server"
)

// deployRoot is deploy/ seen from this package's directory.
var deployRoot = filepath.Join("..", "deploy")

const (
	// deployExampleSecretFile is the one manifest kept out of the kustomization.
	deployExampleSecretFile = "secret.example.yaml"
	deployKustomizationFile = "kustomization.yaml"
	deployPort              = 8080
	// deployMetricsPort is the metrics listener's (LECTERN_METRICS_ADDR):
	// /metrics is never served on deployPort, the sites' port.
	deployMetricsPort = 9090
	// deployMinDrainSeconds is how long lectern needs after SIGTERM: the
	// shutdown delay (/readyz 503 while serving) and then the grace
	// in-flight requests get.
	deployMinDrainSeconds = int64((server.DefaultShutdownDelay + server.ShutdownGrace) / time.Second)
)

// deploySecretEnv are the settings that must come from a Secret, never a literal.
var deploySecretEnv = []string{"DATABASE_URL", "REDIS_URL", "LECTERN_KEK"}

// ---------------------------------------------------------------------------
// The checks

type deployCheck struct {
	name  string
	check func(d *deploySet, f *deployFindings)
}

var deployChecks = []deployCheck{
	{"k8s/objects", deployCheckObjects},
	{"k8s/deployment/probes", deployCheckDeploymentProbes},
	{"k8s/deployment/security", deployCheckDeploymentSecurity},
	{"k8s/deployment/env", deployCheckDeploymentEnv},
	{"k8s/deployment/serve", deployCheckDeploymentServe},
	{"k8s/deployment/shutdown", deployCheckDeploymentShutdown},
	{"k8s/deployment/rollout", deployCheckDeploymentRollout},
	{"k8s/deployment/metrics", deployCheckDeploymentMetrics},
	{"k8s/service", deployCheckService},
	{"k8s/hpa", deployCheckHPA},
	{"k8s/pdb", deployCheckPDB},
	{"k8s/migrate-job", deployCheckMigrateJob},
	{"k8s/secret-example", deployCheckExampleSecret},
	{"k8s/kustomization", deployCheckKustomization},
	{"compose/services", deployCheckComposeServices},
	{"compose/redis", deployCheckComposeRedis},
	{"compose/order", deployCheckComposeOrder},
	{"compose/lectern", deployCheckComposeLectern},
	{"dockerfile", deployCheckDockerfile},
}

func TestDeployManifests(t *testing.T) {
	d := loadDeploySet(t)
	for _, c := range deployChecks {
		t.Run(c.name, func(t *testing.T) {
			var f deployFindings
			c.check(d, &f)
			for _, msg := range f {
				t.Error(msg)
			}
		})
	}
}

// TestDeployChecksCatchMistakes breaks one thing at a time in a freshly
// parsed tree and expects the responsible check to notice.
func TestDeployChecksCatchMistakes(t *testing.T) {
	mistakes := []struct {
		name   string
		check  string
		mutate func(d *deploySet)
	}{
		{"readiness probe on /healthz", "k8s/deployment/probes", func(d *deploySet) {
			d.deployment().container().ReadinessProbe.HTTPGet.Path = "/healthz"
		}},
		{"liveness probe on another port", "k8s/deployment/probes", func(d *deploySet) {
			d.deployment().container().LivenessProbe.HTTPGet.Port = k8sIntOrString{value: "9090", isInt: true}
		}},
		{"root filesystem writable", "k8s/deployment/security", func(d *deploySet) {
			d.deployment().container().SecurityContext.ReadOnlyRootFilesystem = deployPtr(false)
		}},
		{"runAsNonRoot dropped", "k8s/deployment/security", func(d *deploySet) {
			d.deployment().Spec.Template.Spec.SecurityContext.RunAsNonRoot = nil
			d.deployment().container().SecurityContext.RunAsNonRoot = nil
		}},
		{"KEK as a literal", "k8s/deployment/env", func(d *deploySet) {
			c := d.deployment().container()
			for i := range c.Env {
				if c.Env[i].Name == "LECTERN_KEK" {
					c.Env[i] = k8sEnvVar{Name: "LECTERN_KEK", Value: "c2VjcmV0"}
				}
			}
		}},
		{"uploads on the pod's disk", "k8s/deployment/env", func(d *deploySet) {
			delete(d.configMap("lectern-config").Data, "LECTERN_FILES_URL")
		}},
		{"server args migrate", "k8s/deployment/serve", func(d *deploySet) {
			d.deployment().container().Args = []string{"migrate"}
		}},
		{"no preStop", "k8s/deployment/shutdown", func(d *deploySet) {
			d.deployment().container().Lifecycle = nil
		}},
		{"service to a missing port", "k8s/service", func(d *deploySet) {
			d.services[0].Spec.Ports[0].TargetPort = k8sIntOrString{value: "web"}
		}},
		{"service exposes the metrics listener", "k8s/service", func(d *deploySet) {
			d.services[0].Spec.Ports = append(d.services[0].Spec.Ports, k8sServicePort{Name: "metrics", Port: 9090, TargetPort: k8sIntOrString{value: "metrics"}})
		}},
		{"scraped on the sites' port", "k8s/deployment/metrics", func(d *deploySet) {
			d.deployment().Spec.Template.Metadata.Annotations["prometheus.io/port"] = "8080"
		}},
		{"metrics on the pod's loopback", "k8s/deployment/metrics", func(d *deploySet) {
			d.configMap("lectern-config").Data["LECTERN_METRICS_ADDR"] = "127.0.0.1:9090"
		}},
		{"compose publishes metrics to every interface", "compose/lectern", func(d *deploySet) {
			s := d.compose.Services["lectern"]
			s.Ports = append(composePorts{}, "8080:8080", "9090:9090")
			d.compose.Services["lectern"] = s
		}},
		{"image's metrics on loopback", "dockerfile", func(d *deploySet) {
			last := &d.dockerfile[len(d.dockerfile)-1]
			last.Instructions = append(last.Instructions, dockerInstruction{Keyword: "ENV", Args: "LECTERN_METRICS_ADDR=127.0.0.1:9090"})
		}},
		{"HPA targets another Deployment", "k8s/hpa", func(d *deploySet) {
			d.hpas[0].Spec.ScaleTargetRef.Name = "lectern-old"
		}},
		{"HPA min above max", "k8s/hpa", func(d *deploySet) {
			d.hpas[0].Spec.MinReplicas = deployPtr(int32(40))
		}},
		{"job on another image", "k8s/migrate-job", func(d *deploySet) {
			d.job().container().Image = "ghcr.io/lectern/lectern:older"
		}},
		{"job restarts in place", "k8s/migrate-job", func(d *deploySet) {
			d.job().Spec.Template.Spec.RestartPolicy = "OnFailure"
		}},
		{"kustomization forgets the HPA", "k8s/kustomization", func(d *deploySet) {
			d.kustomizations[0].Resources = slices.DeleteFunc(slices.Clone(d.kustomizations[0].Resources),
				func(s string) bool { return s == "hpa.yaml" })
		}},
		{"kustomization ships the example secret", "k8s/kustomization", func(d *deploySet) {
			d.kustomizations[0].Resources = append(d.kustomizations[0].Resources, deployExampleSecretFile)
		}},
		{"redis evicts", "compose/redis", func(d *deploySet) {
			s := d.compose.Services["redis"]
			s.Command = []string{"redis-server", "--maxmemory-policy", "allkeys-lru"}
			d.compose.Services["redis"] = s
		}},
		{"lectern only waits for migrate to start", "compose/order", func(d *deploySet) {
			s := d.compose.Services["lectern"]
			s.DependsOn = composeDeps("migrate", "service_started", "redis", "service_healthy")
			d.compose.Services["lectern"] = s
		}},
		{"final stage runs as root", "dockerfile", func(d *deploySet) {
			last := &d.dockerfile[len(d.dockerfile)-1]
			last.Instructions = append(last.Instructions, dockerInstruction{Keyword: "USER", Args: "root"})
		}},
		{"cgo enabled", "dockerfile", func(d *deploySet) {
			for i := range d.dockerfile {
				for j, in := range d.dockerfile[i].Instructions {
					d.dockerfile[i].Instructions[j].Args = strings.ReplaceAll(in.Args, "CGO_ENABLED=0", "CGO_ENABLED=1")
				}
			}
		}},
	}
	checks := make(map[string]func(*deploySet, *deployFindings))
	for _, c := range deployChecks {
		checks[c.name] = c.check
	}
	for _, m := range mistakes {
		t.Run(m.name, func(t *testing.T) {
			check, ok := checks[m.check]
			if !ok {
				t.Fatalf("no check named %q", m.check)
			}
			d := loadDeploySet(t)
			var before deployFindings
			check(d, &before)
			if len(before) > 0 {
				t.Skipf("check %s already fails on the real tree (see TestDeployManifests)", m.check)
			}
			m.mutate(d)
			var after deployFindings
			check(d, &after)
			if len(after) == 0 {
				t.Errorf("check %s did not notice: %s", m.check, m.name)
			}
		})
	}
}

type deployFindings []string

func (f *deployFindings) errorf(format string, args ...any) {
	*f = append(*f, fmt.Sprintf(format, args...))
}

func deployCheckObjects(d *deploySet, f *deployFindings) {
	seen := map[string]string{}
	for _, o := range d.objects {
		if o.APIVersion == "" || o.Kind == "" {
			f.errorf("%s: a document without apiVersion or kind", o.file)
			continue
		}
		if o.Kind == "Kustomization" {
			continue
		}
		if o.Metadata.Name == "" {
			f.errorf("%s: %s without metadata.name", o.file, o.Kind)
		}
		if o.Metadata.Namespace != "" {
			f.errorf("%s: %s %s pins namespace %q; the manifests are namespace-agnostic",
				o.file, o.Kind, o.Metadata.Name, o.Metadata.Namespace)
		}
		key := o.Kind + "/" + o.Metadata.Name
		if prev, dup := seen[key]; dup {
			f.errorf("%s is defined twice, in %s and %s", key, prev, o.file)
		}
		seen[key] = o.file
	}
	for kind, n := range map[string]int{
		"Deployment": len(d.deployments), "Job": len(d.jobs), "Service": len(d.services),
		"HorizontalPodAutoscaler": len(d.hpas), "PodDisruptionBudget": len(d.pdbs),
		"ConfigMap": len(d.configMaps), "Kustomization": len(d.kustomizations),
	} {
		if n != 1 {
			f.errorf("want exactly one %s in deploy/k8s, found %d", kind, n)
		}
	}
}

func deployCheckDeploymentProbes(d *deploySet, f *deployFindings) {
	dep := d.deployment()
	if dep == nil {
		f.errorf("no Deployment")
		return
	}
	c := dep.container()
	if c == nil {
		f.errorf("Deployment %s has no containers", dep.Metadata.Name)
		return
	}
	deployCheckHTTPProbe(f, "readinessProbe", c, c.ReadinessProbe, "/readyz")
	deployCheckHTTPProbe(f, "livenessProbe", c, c.LivenessProbe, "/healthz")
	if c.StartupProbe != nil {
		// A start-up probe may use either endpoint, but must reach lectern.
		deployCheckHTTPProbe(f, "startupProbe", c, c.StartupProbe, "")
	}
}

func deployCheckHTTPProbe(f *deployFindings, which string, c *k8sContainer, p *k8sProbe, wantPath string) {
	if p == nil || p.HTTPGet == nil {
		f.errorf("container %s: %s must be an httpGet probe", c.Name, which)
		return
	}
	if wantPath != "" && p.HTTPGet.Path != wantPath {
		f.errorf("container %s: %s path is %q, want %q", c.Name, which, p.HTTPGet.Path, wantPath)
	}
	if port, ok := c.resolvePort(p.HTTPGet.Port); !ok || port != deployPort {
		f.errorf("container %s: %s port %q resolves to %d (ok=%v), want %d",
			c.Name, which, p.HTTPGet.Port.value, port, ok, deployPort)
	}
}

func deployCheckDeploymentSecurity(d *deploySet, f *deployFindings) {
	dep := d.deployment()
	if dep == nil {
		f.errorf("no Deployment")
		return
	}
	deployCheckHardenedPod(f, "Deployment "+dep.Metadata.Name, &dep.Spec.Template.Spec)
}

// deployCheckHardenedPod wants every container non-root, with a read-only root file
// system, no privilege escalation and no capabilities.
func deployCheckHardenedPod(f *deployFindings, what string, pod *k8sPodSpec) {
	if len(pod.Containers) == 0 {
		f.errorf("%s: no containers", what)
	}
	for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
		sc := c.SecurityContext
		nonRoot := pod.SecurityContext.RunAsNonRoot
		if sc.RunAsNonRoot != nil {
			nonRoot = sc.RunAsNonRoot
		}
		if nonRoot == nil || !*nonRoot {
			f.errorf("%s, container %s: runAsNonRoot must be true (pod or container securityContext)", what, c.Name)
		}
		for _, uid := range []*int64{pod.SecurityContext.RunAsUser, sc.RunAsUser} {
			if uid != nil && *uid == 0 {
				f.errorf("%s, container %s: runAsUser 0 is root", what, c.Name)
			}
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			f.errorf("%s, container %s: securityContext.readOnlyRootFilesystem must be true", what, c.Name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			f.errorf("%s, container %s: securityContext.allowPrivilegeEscalation must be false", what, c.Name)
		}
		if sc.Privileged != nil && *sc.Privileged {
			f.errorf("%s, container %s: privileged", what, c.Name)
		}
		if !slices.Contains(sc.Capabilities.Drop, "ALL") {
			f.errorf("%s, container %s: securityContext.capabilities.drop must contain ALL, got %v", what, c.Name, sc.Capabilities.Drop)
		}
		if len(sc.Capabilities.Add) > 0 {
			f.errorf("%s, container %s: adds capabilities %v", what, c.Name, sc.Capabilities.Add)
		}
	}
}

func deployCheckDeploymentEnv(d *deploySet, f *deployFindings) {
	dep := d.deployment()
	if dep == nil || dep.container() == nil {
		f.errorf("no Deployment with a container")
		return
	}
	c := dep.container()
	deployCheckSecretEnv(d, f, "Deployment "+dep.Metadata.Name, c)

	var cms []string
	for _, ef := range c.EnvFrom {
		if ef.ConfigMapRef != nil {
			cms = append(cms, ef.ConfigMapRef.Name)
		}
	}
	if len(cms) == 0 {
		f.errorf("container %s: no envFrom configMapRef; the non-secret settings come from a ConfigMap", c.Name)
	}
	for _, name := range cms {
		cm := d.configMap(name)
		if cm == nil {
			f.errorf("container %s: envFrom names ConfigMap %q, which deploy/k8s does not define", c.Name, name)
			continue
		}
		for _, k := range deploySecretEnv {
			if _, ok := cm.Data[k]; ok {
				f.errorf("ConfigMap %s carries %s; it belongs in the Secret", name, k)
			}
		}
		if addr, ok := cm.Data["LECTERN_ADDR"]; ok {
			_, p, err := net.SplitHostPort(addr)
			if n, _ := strconv.Atoi(p); err != nil || n != deployPort {
				f.errorf("ConfigMap %s: LECTERN_ADDR %q does not listen on %d, where the probes and the Service point", name, addr, deployPort)
			}
		}
		if got := cm.Data["LECTERN_LOG_FORMAT"]; got != "json" {
			f.errorf("ConfigMap %s: LECTERN_LOG_FORMAT is %q, want json", name, got)
		}
		if _, ok := cm.Data["LECTERN_TRUSTED_PROXIES"]; !ok {
			f.errorf("ConfigMap %s: no LECTERN_TRUSTED_PROXIES", name)
		}
		// Replicas share uploads only through a bucket; a pod's own disk
		// would serve a file from one replica in three.
		if u := cm.Data["LECTERN_FILES_URL"]; !strings.HasPrefix(u, "s3://") {
			f.errorf("ConfigMap %s: LECTERN_FILES_URL is %q; the Deployment runs several replicas, which need a shared s3:// bucket", name, u)
		} else if _, err := s3files.ParseURL(u); err != nil {
			f.errorf("ConfigMap %s: LECTERN_FILES_URL: %v", name, err)
		}
	}
}

// deployCheckSecretEnv wants DATABASE_URL, REDIS_URL and LECTERN_KEK from
// secretKeyRefs that point at a key the example Secret documents.
func deployCheckSecretEnv(d *deploySet, f *deployFindings, what string, c *k8sContainer) {
	for _, name := range deploySecretEnv {
		i := slices.IndexFunc(c.Env, func(e k8sEnvVar) bool { return e.Name == name })
		if i < 0 {
			f.errorf("%s, container %s: no env %s", what, c.Name, name)
			continue
		}
		e := c.Env[i]
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			f.errorf("%s, container %s: env %s must come from a secretKeyRef, not a literal or a ConfigMap", what, c.Name, name)
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		if ref.Optional != nil && *ref.Optional {
			f.errorf("%s, container %s: env %s secretKeyRef is optional; lectern must not start without it", what, c.Name, name)
		}
		s := d.secret(ref.Name)
		if s == nil {
			f.errorf("%s, container %s: env %s refers to Secret %q, which %s does not describe", what, c.Name, name, ref.Name, deployExampleSecretFile)
			continue
		}
		if !s.hasKey(ref.Key) {
			f.errorf("%s, container %s: env %s refers to key %q, missing from Secret %s in %s", what, c.Name, name, ref.Key, ref.Name, deployExampleSecretFile)
		}
	}
}

func deployCheckDeploymentServe(d *deploySet, f *deployFindings) {
	dep := d.deployment()
	if dep == nil || dep.container() == nil {
		f.errorf("no Deployment with a container")
		return
	}
	c := dep.container()
	if len(c.Command) > 0 {
		f.errorf("container %s: command %v overrides the image's ENTRYPOINT /lectern", c.Name, c.Command)
	}
	if !slices.Equal(c.Args, []string{"serve"}) {
		f.errorf("container %s: args %q, want [serve]", c.Name, c.Args)
	}
	if c.Image == "" {
		f.errorf("container %s: no image", c.Name)
	}
	if i := slices.IndexFunc(c.Ports, func(p k8sContainerPort) bool { return p.ContainerPort == deployPort }); i < 0 || c.Ports[i].Name != "http" {
		f.errorf("container %s: want containerPort %d named http, got %+v", c.Name, deployPort, c.Ports)
	}
	if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" {
		f.errorf("container %s: resources.requests must set cpu and memory (the HPA scales on the CPU request), got %v", c.Name, c.Resources.Requests)
	}
	if c.Resources.Limits["memory"] == "" {
		f.errorf("container %s: resources.limits.memory is not set", c.Name)
	}
	if dep.Spec.Template.Spec.EnableServiceLinks == nil || *dep.Spec.Template.Spec.EnableServiceLinks {
		f.errorf("Deployment %s: enableServiceLinks must be false, or the Service named %q injects LECTERN_* variables into lectern's settings",
			dep.Metadata.Name, "lectern")
	}
}

func deployCheckDeploymentShutdown(d *deploySet, f *deployFindings) {
	dep := d.deployment()
	if dep == nil || dep.container() == nil {
		f.errorf("no Deployment with a container")
		return
	}
	c := dep.container()
	grace := int64(30) // the Kubernetes default
	if g := dep.Spec.Template.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = *g
	}
	var sleep int64
	switch {
	case c.Lifecycle == nil || c.Lifecycle.PreStop == nil:
		f.errorf("container %s: no lifecycle.preStop; without it pods get SIGTERM while still receiving traffic", c.Name)
	case c.Lifecycle.PreStop.Sleep == nil:
		f.errorf("container %s: preStop must be a sleep action (the distroless image has no shell for exec)", c.Name)
	default:
		sleep = c.Lifecycle.PreStop.Sleep.Seconds
		if sleep <= 0 {
			f.errorf("container %s: preStop sleep of %d s", c.Name, sleep)
		}
	}
	if grace-sleep < deployMinDrainSeconds {
		f.errorf("Deployment %s: terminationGracePeriodSeconds %d leaves %d s after a %d s preStop; in-flight requests need %d s",
			dep.Metadata.Name, grace, grace-sleep, sleep, deployMinDrainSeconds)
	}
}

func deployCheckDeploymentRollout(d *deploySet, f *deployFindings) {
	dep := d.deployment()
	if dep == nil {
		f.errorf("no Deployment")
		return
	}
	if r := dep.Spec.Replicas; r == nil || *r < 3 {
		f.errorf("Deployment %s: replicas %v, want at least 3", dep.Metadata.Name, deployDeref(r))
	}
	if !dep.Spec.Selector.matches(dep.Spec.Template.Metadata.Labels) || len(dep.Spec.Selector.MatchLabels) == 0 {
		f.errorf("Deployment %s: selector %v does not select its pod labels %v",
			dep.Metadata.Name, dep.Spec.Selector.MatchLabels, dep.Spec.Template.Metadata.Labels)
	}
	s := dep.Spec.Strategy
	if s.Type != "" && s.Type != "RollingUpdate" {
		f.errorf("Deployment %s: strategy %s, want RollingUpdate", dep.Metadata.Name, s.Type)
	}
	if s.RollingUpdate == nil || s.RollingUpdate.MaxUnavailable == nil ||
		(s.RollingUpdate.MaxUnavailable.value != "0" && s.RollingUpdate.MaxUnavailable.value != "0%") {
		f.errorf("Deployment %s: strategy.rollingUpdate.maxUnavailable must be 0 (the default 25%% drops capacity during rollouts)", dep.Metadata.Name)
	}
	pod := dep.Spec.Template.Spec
	spread := len(pod.TopologySpreadConstraints) > 0
	for _, tsc := range pod.TopologySpreadConstraints {
		if !tsc.LabelSelector.matches(dep.Spec.Template.Metadata.Labels) || len(tsc.LabelSelector.MatchLabels) == 0 {
			f.errorf("Deployment %s: topologySpreadConstraint on %s does not select the pods", dep.Metadata.Name, tsc.TopologyKey)
		}
	}
	if !spread && (pod.Affinity == nil || pod.Affinity.PodAntiAffinity == nil) {
		f.errorf("Deployment %s: neither topologySpreadConstraints nor podAntiAffinity: replicas may all land on one node", dep.Metadata.Name)
	}
}

func deployCheckDeploymentMetrics(d *deploySet, f *deployFindings) {
	dep := d.deployment()
	if dep == nil || dep.container() == nil {
		f.errorf("no Deployment with a container")
		return
	}
	a := dep.Spec.Template.Metadata.Annotations
	if a["prometheus.io/scrape"] != "true" {
		f.errorf("pod annotation prometheus.io/scrape is %q, want \"true\"", a["prometheus.io/scrape"])
	}
	if p := a["prometheus.io/path"]; p != "/metrics" {
		f.errorf("pod annotation prometheus.io/path is %q, want /metrics", p)
	}
	port, ok := dep.container().resolvePort(k8sIntOrString{value: a["prometheus.io/port"], isInt: deployIsDigits(a["prometheus.io/port"])})
	if !ok || port != deployMetricsPort {
		f.errorf("pod annotation prometheus.io/port is %q, want the metrics containerPort %d (/metrics is not served on the sites' port %d)",
			a["prometheus.io/port"], deployMetricsPort, deployPort)
	}
	// The metrics listener must listen on that port, on the pod's address
	// (lectern's own default is loopback, which Prometheus cannot reach).
	found := false
	for _, ef := range dep.container().EnvFrom {
		if ef.ConfigMapRef == nil || d.configMap(ef.ConfigMapRef.Name) == nil {
			continue
		}
		addr, ok := d.configMap(ef.ConfigMapRef.Name).Data["LECTERN_METRICS_ADDR"]
		if !ok {
			continue
		}
		found = true
		if !deployReachableAddr(addr, deployMetricsPort) {
			f.errorf("ConfigMap %s: LECTERN_METRICS_ADDR %q, want \":%d\" (all of the pod's addresses, the annotated port)", ef.ConfigMapRef.Name, addr, deployMetricsPort)
		}
	}
	if !found {
		f.errorf("no ConfigMap of the Deployment sets LECTERN_METRICS_ADDR; the default listens on the pod's loopback, out of Prometheus' reach")
	}
}

// deployReachableAddr reports whether addr listens on port on every
// address, not on loopback alone.
func deployReachableAddr(addr string, port int) bool {
	host, p, err := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return err == nil && n == port && (host == "" || host == "0.0.0.0" || host == "::")
}

func deployCheckService(d *deploySet, f *deployFindings) {
	dep := d.deployment()
	if dep == nil || dep.container() == nil || len(d.services) == 0 {
		f.errorf("need a Deployment and a Service")
		return
	}
	for _, s := range d.services {
		if s.Spec.Type != "" && s.Spec.Type != "ClusterIP" {
			f.errorf("Service %s: type %s, want ClusterIP (expose it through an Ingress or Gateway)", s.Metadata.Name, s.Spec.Type)
		}
		if len(s.Spec.Selector) == 0 || !(k8sLabelSelector{MatchLabels: s.Spec.Selector}).matches(dep.Spec.Template.Metadata.Labels) {
			f.errorf("Service %s: selector %v does not select the Deployment's pods %v",
				s.Metadata.Name, s.Spec.Selector, dep.Spec.Template.Metadata.Labels)
		}
		i := slices.IndexFunc(s.Spec.Ports, func(p k8sServicePort) bool { return p.Name == "http" })
		if i < 0 {
			f.errorf("Service %s: no port named http", s.Metadata.Name)
			continue
		}
		p := s.Spec.Ports[i]
		if p.Port != 80 {
			f.errorf("Service %s: port http is %d, want 80", s.Metadata.Name, p.Port)
		}
		target := p.TargetPort
		if target.value == "" { // defaults to port
			target = k8sIntOrString{value: strconv.Itoa(p.Port), isInt: true}
		}
		if n, ok := dep.container().resolvePort(target); !ok || n != deployPort {
			f.errorf("Service %s: targetPort %q is not the container's port %d", s.Metadata.Name, target.value, deployPort)
		}
		// What the Ingress reaches must not include the metrics listener.
		for _, sp := range s.Spec.Ports {
			target := sp.TargetPort
			if target.value == "" {
				target = k8sIntOrString{value: strconv.Itoa(sp.Port), isInt: true}
			}
			if n, ok := dep.container().resolvePort(target); ok && n == deployMetricsPort {
				f.errorf("Service %s: port %s exposes the metrics listener (%d)", s.Metadata.Name, sp.Name, deployMetricsPort)
			}
		}
	}
}

func deployCheckHPA(d *deploySet, f *deployFindings) {
	if len(d.hpas) == 0 {
		f.errorf("no HorizontalPodAutoscaler")
		return
	}
	for _, h := range d.hpas {
		if h.APIVersion != "autoscaling/v2" {
			f.errorf("HPA %s: apiVersion %s, want autoscaling/v2", h.Metadata.Name, h.APIVersion)
		}
		ref := h.Spec.ScaleTargetRef
		if ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" {
			f.errorf("HPA %s: scaleTargetRef is %s %s, want apps/v1 Deployment", h.Metadata.Name, ref.APIVersion, ref.Kind)
		}
		dep := d.deploymentNamed(ref.Name)
		if dep == nil {
			f.errorf("HPA %s: scaleTargetRef names Deployment %q, which deploy/k8s does not define", h.Metadata.Name, ref.Name)
		}
		lo := int32(1)
		if h.Spec.MinReplicas != nil {
			lo = *h.Spec.MinReplicas
		}
		if lo < 1 || h.Spec.MaxReplicas < lo {
			f.errorf("HPA %s: minReplicas %d, maxReplicas %d: want 1 <= min <= max", h.Metadata.Name, lo, h.Spec.MaxReplicas)
		}
		if dep != nil && dep.Spec.Replicas != nil && (*dep.Spec.Replicas < lo || *dep.Spec.Replicas > h.Spec.MaxReplicas) {
			f.errorf("HPA %s: Deployment replicas %d outside [%d, %d]", h.Metadata.Name, *dep.Spec.Replicas, lo, h.Spec.MaxReplicas)
		}
		cpu := slices.IndexFunc(h.Spec.Metrics, func(m k8sHPAMetric) bool {
			return m.Type == "Resource" && m.Resource != nil && m.Resource.Name == "cpu" &&
				m.Resource.Target.Type == "Utilization" && m.Resource.Target.AverageUtilization != nil &&
				*m.Resource.Target.AverageUtilization > 0 && *m.Resource.Target.AverageUtilization <= 100
		})
		if cpu < 0 {
			f.errorf("HPA %s: no CPU utilization target", h.Metadata.Name)
		} else if dep != nil {
			for _, c := range dep.Spec.Template.Spec.Containers {
				if c.Resources.Requests["cpu"] == "" {
					f.errorf("HPA %s scales on CPU utilization, but container %s has no CPU request", h.Metadata.Name, c.Name)
				}
			}
		}
	}
}

func deployCheckPDB(d *deploySet, f *deployFindings) {
	dep := d.deployment()
	if dep == nil || len(d.pdbs) == 0 {
		f.errorf("need a Deployment and a PodDisruptionBudget")
		return
	}
	for _, p := range d.pdbs {
		if !p.Spec.Selector.matches(dep.Spec.Template.Metadata.Labels) || len(p.Spec.Selector.MatchLabels) == 0 {
			f.errorf("PDB %s: selector %v does not select the Deployment's pods", p.Metadata.Name, p.Spec.Selector.MatchLabels)
		}
		if p.Spec.MinAvailable == nil || !p.Spec.MinAvailable.isInt {
			f.errorf("PDB %s: want an integer minAvailable", p.Metadata.Name)
			continue
		}
		n, _ := strconv.Atoi(p.Spec.MinAvailable.value)
		if n < 1 {
			f.errorf("PDB %s: minAvailable %d protects nothing", p.Metadata.Name, n)
		}
		for _, h := range d.hpas {
			if h.Spec.MinReplicas != nil && int32(n) >= *h.Spec.MinReplicas {
				f.errorf("PDB %s: minAvailable %d >= HPA %s minReplicas %d: node drains would block", p.Metadata.Name, n, h.Metadata.Name, *h.Spec.MinReplicas)
			}
		}
	}
}

func deployCheckMigrateJob(d *deploySet, f *deployFindings) {
	j, dep := d.job(), d.deployment()
	if j == nil || dep == nil || j.container() == nil || dep.container() == nil {
		f.errorf("need a Job and a Deployment, each with a container")
		return
	}
	c := j.container()
	what := "Job " + j.Metadata.Name
	if len(c.Command) > 0 {
		f.errorf("%s: command %v overrides the image's ENTRYPOINT /lectern", what, c.Command)
	}
	if !slices.Equal(c.Args, []string{"migrate"}) {
		f.errorf("%s: args %q, want [migrate]", what, c.Args)
	}
	if want := dep.container().Image; c.Image != want {
		f.errorf("%s: image %q differs from the Deployment's %q; migrations must match the code they serve", what, c.Image, want)
	}
	if rp := j.Spec.Template.Spec.RestartPolicy; rp != "Never" {
		f.errorf("%s: restartPolicy %q, want Never", what, rp)
	}
	if j.Spec.BackoffLimit == nil {
		f.errorf("%s: no backoffLimit (the default retries six times)", what)
	}
	if j.Spec.TTLSecondsAfterFinished == nil {
		f.errorf("%s: no ttlSecondsAfterFinished; finished Jobs would pile up", what)
	}
	deployCheckHardenedPod(f, what, &j.Spec.Template.Spec)
	deployCheckSecretEnv(d, f, what, c)
}

func deployCheckExampleSecret(d *deploySet, f *deployFindings) {
	var ex []*k8sSecret
	for i := range d.secrets {
		if d.secrets[i].file == deployExampleSecretFile {
			ex = append(ex, &d.secrets[i])
		}
	}
	if len(ex) != 1 {
		f.errorf("%s: want exactly one Secret, found %d", deployExampleSecretFile, len(ex))
	}
	for _, s := range d.secrets {
		if s.file != deployExampleSecretFile {
			f.errorf("%s: Secret %s outside %s; real secrets do not belong in the repository", s.file, s.Metadata.Name, deployExampleSecretFile)
		}
	}
	if !bytes.Contains(bytes.ToUpper(d.rawK8s[deployExampleSecretFile]), []byte("EXAMPLE")) {
		f.errorf("%s is not marked as an example", deployExampleSecretFile)
	}
	for _, s := range ex {
		// A placeholder that happens to be a usable key would become a
		// well-known key the day someone applies the example.
		if v, ok := s.value("kek"); ok {
			if k, err := base64.StdEncoding.DecodeString(v); err == nil && len(k) == 32 {
				f.errorf("%s: the kek placeholder is a valid 32-byte key; keep it obviously invalid", deployExampleSecretFile)
			}
		}
	}
}

func deployCheckKustomization(d *deploySet, f *deployFindings) {
	if len(d.kustomizations) != 1 {
		f.errorf("want one %s", deployKustomizationFile)
		return
	}
	listed := d.kustomizations[0].Resources
	for _, r := range listed {
		if r != path.Clean(r) || strings.Contains(r, "/") {
			f.errorf("%s lists %q; want plain file names in deploy/k8s", deployKustomizationFile, r)
			continue
		}
		if !slices.Contains(d.k8sFiles, r) {
			f.errorf("%s lists %s, which does not exist in deploy/k8s", deployKustomizationFile, r)
		}
		if r == deployExampleSecretFile {
			f.errorf("%s lists %s; the example Secret must never be applied", deployKustomizationFile, r)
		}
	}
	for _, name := range d.k8sFiles {
		if name == deployKustomizationFile || name == deployExampleSecretFile {
			continue
		}
		if !slices.Contains(listed, name) {
			f.errorf("deploy/k8s/%s is not listed in %s resources", name, deployKustomizationFile)
		}
	}
}

func deployCheckComposeServices(d *deploySet, f *deployFindings) {
	for _, name := range []string{"postgres", "redis", "migrate", "lectern"} {
		if _, ok := d.compose.Services[name]; !ok {
			f.errorf("compose.yaml: no service %q", name)
		}
	}
	if pg := d.compose.Services["postgres"]; !strings.HasPrefix(pg.Image, "postgres:") || pg.Healthcheck == nil || len(pg.Healthcheck.Test) == 0 {
		f.errorf("compose.yaml: postgres wants a postgres: image and a healthcheck, got image %q", pg.Image)
	}
	if pg := d.compose.Services["postgres"]; len(pg.Volumes) == 0 {
		f.errorf("compose.yaml: postgres has no volume; the database would vanish with the container")
	}
	mig, srv := d.compose.Services["migrate"], d.compose.Services["lectern"]
	if !slices.Equal(mig.Command, []string{"migrate"}) {
		f.errorf("compose.yaml: migrate command %q, want [migrate]", mig.Command)
	}
	if !slices.Equal(srv.Command, []string{"serve"}) {
		f.errorf("compose.yaml: lectern command %q, want [serve]", srv.Command)
	}
	if mig.Image == "" || mig.Image != srv.Image {
		f.errorf("compose.yaml: migrate (%q) and lectern (%q) must run the same image", mig.Image, srv.Image)
	}
	for _, name := range []string{"migrate", "lectern"} {
		b := d.compose.Services[name].Build
		if b == nil {
			continue
		}
		df := b.Dockerfile
		if df == "" {
			df = "Dockerfile"
		}
		p := filepath.Join(deployRoot, filepath.FromSlash(b.Context), filepath.FromSlash(df))
		if _, err := os.Stat(p); err != nil {
			f.errorf("compose.yaml: %s builds from context %q with %q: %v", name, b.Context, df, err)
		}
	}
}

func deployCheckComposeRedis(d *deploySet, f *deployFindings) {
	r, ok := d.compose.Services["redis"]
	if !ok {
		f.errorf("compose.yaml: no redis service")
		return
	}
	if !strings.HasPrefix(r.Image, "redis:") {
		f.errorf("compose.yaml: redis image %q", r.Image)
	}
	i := slices.Index(r.Command, "--maxmemory-policy")
	if i < 0 || i+1 >= len(r.Command) || r.Command[i+1] != "noeviction" {
		f.errorf("compose.yaml: redis must run with --maxmemory-policy noeviction (DESIGN §4), command is %q", r.Command)
	}
	if r.Healthcheck == nil || len(r.Healthcheck.Test) == 0 {
		f.errorf("compose.yaml: redis has no healthcheck, so nothing can wait for it")
	}
}

func deployCheckComposeOrder(d *deploySet, f *deployFindings) {
	want := []struct{ service, on, condition string }{
		{"migrate", "postgres", "service_healthy"},
		{"lectern", "migrate", "service_completed_successfully"},
		{"lectern", "redis", "service_healthy"},
	}
	for _, w := range want {
		got, ok := d.compose.Services[w.service].DependsOn[w.on]
		if !ok || got != w.condition {
			f.errorf("compose.yaml: %s must depend on %s with condition %s, got %q (present=%v)", w.service, w.on, w.condition, got, ok)
		}
	}
	for name, s := range d.compose.Services {
		for on := range s.DependsOn {
			if _, ok := d.compose.Services[on]; !ok {
				f.errorf("compose.yaml: %s depends on unknown service %s", name, on)
			}
		}
	}
}

func deployCheckComposeLectern(d *deploySet, f *deployFindings) {
	for _, name := range []string{"migrate", "lectern"} {
		s := d.compose.Services[name]
		for k, scheme := range map[string]string{"DATABASE_URL": "postgres", "REDIS_URL": "redis"} {
			u, err := url.Parse(s.Environment[k])
			if err != nil || u.Scheme != scheme {
				f.errorf("compose.yaml: %s env %s = %q, want a %s:// URL", name, k, s.Environment[k], scheme)
				continue
			}
			if _, ok := d.compose.Services[u.Hostname()]; !ok {
				f.errorf("compose.yaml: %s env %s points at host %q, which is no compose service", name, k, u.Hostname())
			}
		}
		if v := s.Environment["LECTERN_KEK"]; v != "" {
			f.errorf("compose.yaml: %s sets LECTERN_KEK inline; use a compose secret and LECTERN_KEK_FILE", name)
		}
		kek := s.Environment["LECTERN_KEK_FILE"]
		secretName, ok := strings.CutPrefix(kek, "/run/secrets/")
		if !ok {
			f.errorf("compose.yaml: %s LECTERN_KEK_FILE = %q, want /run/secrets/<compose secret>", name, kek)
			continue
		}
		if !slices.Contains(s.Secrets, secretName) {
			f.errorf("compose.yaml: %s reads %s but is not given secret %q (has %v)", name, kek, secretName, s.Secrets)
		}
		if top, ok := d.compose.Secrets[secretName]; !ok || top.File == "" {
			f.errorf("compose.yaml: secret %q is not declared with a file at the top level", secretName)
		}
	}
	srv := d.compose.Services["lectern"]
	published := slices.ContainsFunc(srv.Ports, func(p string) bool {
		p, _, _ = strings.Cut(p, "/")
		return p == strconv.Itoa(deployPort) || strings.HasSuffix(p, ":"+strconv.Itoa(deployPort))
	})
	if !published {
		f.errorf("compose.yaml: lectern does not publish container port %d, ports %v", deployPort, srv.Ports)
	}
	// The metrics listener is published, if at all, on the host's loopback.
	for _, p := range srv.Ports {
		spec, _, _ := strings.Cut(p, "/")
		if strings.HasSuffix(spec, ":"+strconv.Itoa(deployMetricsPort)) && !strings.HasPrefix(spec, "127.0.0.1:") {
			f.errorf("compose.yaml: lectern publishes the metrics port as %q; bind it to 127.0.0.1", p)
		}
	}
	if addr := srv.Environment["LECTERN_METRICS_ADDR"]; addr != "" && !deployReachableAddr(addr, deployMetricsPort) {
		f.errorf("compose.yaml: lectern LECTERN_METRICS_ADDR %q, want \":%d\" (the container's loopback is unreachable from the host)", addr, deployMetricsPort)
	}
	if srv.StopGracePeriod == "" {
		f.errorf("compose.yaml: lectern has no stop_grace_period; the default 10 s cuts in-flight requests short")
	} else if g, err := time.ParseDuration(srv.StopGracePeriod); err != nil || g < time.Duration(deployMinDrainSeconds)*time.Second {
		f.errorf("compose.yaml: lectern stop_grace_period %q, want at least %ds", srv.StopGracePeriod, deployMinDrainSeconds)
	}
}

func deployCheckDockerfile(d *deploySet, f *deployFindings) {
	stages := d.dockerfile
	if len(stages) < 2 {
		f.errorf("Dockerfile: want a multi-stage build, found %d stage(s)", len(stages))
		return
	}
	final := stages[len(stages)-1]
	builders := stages[:len(stages)-1]

	cgoOff, builds := false, false
	for _, s := range builders {
		for _, in := range s.Instructions {
			switch in.Keyword {
			case "ENV", "ARG", "RUN":
				if strings.Contains(in.Args, "CGO_ENABLED=0") ||
					(in.Keyword == "ENV" && slices.Equal(strings.Fields(in.Args), []string{"CGO_ENABLED", "0"})) {
					cgoOff = true
				}
				if strings.Contains(in.Args, "CGO_ENABLED=1") {
					cgoOff = false
				}
			}
			if in.Keyword == "RUN" && strings.Contains(in.Args, "go build") && strings.Contains(in.Args, "./cmd/lectern") {
				builds = true
			}
		}
	}
	if !cgoOff {
		f.errorf("Dockerfile: no build stage sets CGO_ENABLED=0; the final image has no libc")
	}
	if !builds {
		f.errorf("Dockerfile: no build stage runs go build ... ./cmd/lectern")
	}

	user := ""
	for _, in := range final.Instructions {
		if in.Keyword == "USER" {
			user = in.Args
		}
	}
	if user != "" {
		name, _, _ := strings.Cut(user, ":")
		if name == "root" || name == "0" {
			f.errorf("Dockerfile: final stage (FROM %s) runs as USER %s", final.Base, user)
		}
	} else if _, tag, _ := strings.Cut(path.Base(final.Base), ":"); !strings.HasSuffix(tag, "nonroot") {
		f.errorf("Dockerfile: final stage FROM %s sets no non-root USER and is no :nonroot image", final.Base)
	}
	if strings.HasPrefix(final.Base, "golang:") {
		f.errorf("Dockerfile: final stage is the Go toolchain image %s", final.Base)
	}

	exec := func(keyword string) []string {
		var out []string
		for _, in := range final.Instructions {
			if in.Keyword == keyword {
				out = nil
				if err := json.Unmarshal([]byte(in.Args), &out); err != nil {
					f.errorf("Dockerfile: %s %s is not in exec (JSON) form; the image has no shell", keyword, in.Args)
				}
			}
		}
		return out
	}
	if got := exec("ENTRYPOINT"); !slices.Equal(got, []string{"/lectern"}) {
		f.errorf("Dockerfile: final ENTRYPOINT %q, want [/lectern]", got)
	}
	if got := exec("CMD"); !slices.Equal(got, []string{"serve"}) {
		f.errorf("Dockerfile: final CMD %q, want [serve]", got)
	}
	exposed := slices.ContainsFunc(final.Instructions, func(in dockerInstruction) bool {
		return in.Keyword == "EXPOSE" && slices.ContainsFunc(strings.Fields(in.Args), func(p string) bool {
			return strings.TrimSuffix(p, "/tcp") == strconv.Itoa(deployPort)
		})
	})
	if !exposed {
		f.errorf("Dockerfile: final stage does not EXPOSE %d", deployPort)
	}
	// Inside a container the binary's loopback default for the metrics
	// listener is unreachable; the image listens on the container's address.
	metricsAddr := ""
	for _, in := range final.Instructions {
		if in.Keyword == "ENV" {
			for _, kv := range strings.Fields(in.Args) {
				if v, ok := strings.CutPrefix(kv, "LECTERN_METRICS_ADDR="); ok {
					metricsAddr = v
				}
			}
		}
	}
	if !deployReachableAddr(metricsAddr, deployMetricsPort) {
		f.errorf("Dockerfile: final stage sets LECTERN_METRICS_ADDR=%q, want :%d", metricsAddr, deployMetricsPort)
	}
}

// ---------------------------------------------------------------------------
// Loading

type deploySet struct {
	k8sFiles []string          // base names of the YAML files in deploy/k8s
	rawK8s   map[string][]byte // their contents
	objects  []k8sHeader

	deployments    []k8sDeployment
	jobs           []k8sJob
	services       []k8sService
	hpas           []k8sHPA
	pdbs           []k8sPDB
	configMaps     []k8sConfigMap
	secrets        []k8sSecret
	kustomizations []k8sKustomization

	compose    composeFile
	dockerfile []dockerStage
}

func loadDeploySet(t *testing.T) *deploySet {
	t.Helper()
	d := &deploySet{rawK8s: map[string][]byte{}}
	k8sDir := filepath.Join(deployRoot, "k8s")
	entries, err := os.ReadDir(k8sDir)
	if err != nil {
		t.Fatalf("read deploy/k8s: %v", err)
	}
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		d.k8sFiles = append(d.k8sFiles, e.Name())
		data, err := os.ReadFile(filepath.Join(k8sDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		d.rawK8s[e.Name()] = data
		for i, doc := range deployYAMLDocuments(t, "deploy/k8s/"+e.Name(), data) {
			where := fmt.Sprintf("deploy/k8s/%s (document %d)", e.Name(), i+1)
			var h k8sHeader
			deployDecode(t, where, doc, &h)
			h.file = e.Name()
			d.objects = append(d.objects, h)
			switch h.Kind {
			case "Deployment":
				d.deployments = append(d.deployments, deployDecodeAs[k8sDeployment](t, where, doc))
			case "Job":
				d.jobs = append(d.jobs, deployDecodeAs[k8sJob](t, where, doc))
			case "Service":
				d.services = append(d.services, deployDecodeAs[k8sService](t, where, doc))
			case "HorizontalPodAutoscaler":
				d.hpas = append(d.hpas, deployDecodeAs[k8sHPA](t, where, doc))
			case "PodDisruptionBudget":
				d.pdbs = append(d.pdbs, deployDecodeAs[k8sPDB](t, where, doc))
			case "ConfigMap":
				d.configMaps = append(d.configMaps, deployDecodeAs[k8sConfigMap](t, where, doc))
			case "Secret":
				s := deployDecodeAs[k8sSecret](t, where, doc)
				s.file = e.Name()
				d.secrets = append(d.secrets, s)
			case "Kustomization":
				d.kustomizations = append(d.kustomizations, deployDecodeAs[k8sKustomization](t, where, doc))
			}
		}
	}
	if len(d.k8sFiles) == 0 {
		t.Fatal("deploy/k8s holds no YAML files")
	}

	data, err := os.ReadFile(filepath.Join(deployRoot, "compose.yaml"))
	if err != nil {
		t.Fatalf("read deploy/compose.yaml: %v", err)
	}
	docs := deployYAMLDocuments(t, "deploy/compose.yaml", data)
	if len(docs) != 1 {
		t.Fatalf("deploy/compose.yaml: want one YAML document, found %d", len(docs))
	}
	deployDecode(t, "deploy/compose.yaml", docs[0], &d.compose)

	data, err = os.ReadFile(filepath.Join(deployRoot, "Dockerfile"))
	if err != nil {
		t.Fatalf("read deploy/Dockerfile: %v", err)
	}
	d.dockerfile = deployParseDockerfile(t, data)
	return d
}

// deployYAMLDocuments splits a multi-document stream, failing on the first parse
// error and dropping empty documents.
func deployYAMLDocuments(t *testing.T, name string, data []byte) []*yaml.Node {
	t.Helper()
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for i := 1; ; i++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: document %d does not parse: %v", name, i, err)
		}
		if len(n.Content) == 0 || n.Content[0].Tag == "!!null" {
			continue
		}
		if n.Content[0].Kind != yaml.MappingNode {
			t.Fatalf("%s: document %d is not a mapping", name, i)
		}
		docs = append(docs, &n)
	}
}

func deployDecode(t *testing.T, where string, n *yaml.Node, v any) {
	t.Helper()
	if err := n.Decode(v); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
}

func deployDecodeAs[T any](t *testing.T, where string, n *yaml.Node) T {
	t.Helper()
	var v T
	deployDecode(t, where, n, &v)
	return v
}

func (d *deploySet) deployment() *k8sDeployment {
	if len(d.deployments) == 0 {
		return nil
	}
	return &d.deployments[0]
}

func (d *deploySet) deploymentNamed(name string) *k8sDeployment {
	for i := range d.deployments {
		if d.deployments[i].Metadata.Name == name {
			return &d.deployments[i]
		}
	}
	return nil
}

func (d *deploySet) job() *k8sJob {
	if len(d.jobs) == 0 {
		return nil
	}
	return &d.jobs[0]
}

func (d *deploySet) configMap(name string) *k8sConfigMap {
	for i := range d.configMaps {
		if d.configMaps[i].Metadata.Name == name {
			return &d.configMaps[i]
		}
	}
	return nil
}

func (d *deploySet) secret(name string) *k8sSecret {
	for i := range d.secrets {
		if d.secrets[i].Metadata.Name == name {
			return &d.secrets[i]
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// Kubernetes shapes: only the fields the checks read.

type k8sObjectMeta struct {
	Name        string            `yaml:"name"`
	Namespace   string            `yaml:"namespace"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type k8sHeader struct {
	file       string
	APIVersion string        `yaml:"apiVersion"`
	Kind       string        `yaml:"kind"`
	Metadata   k8sObjectMeta `yaml:"metadata"`
}

// intOrString keeps a scalar as written; isInt tells 8080 from "http".
type k8sIntOrString struct {
	value string
	isInt bool
}

func (v *k8sIntOrString) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a number or a name", n.Line)
	}
	v.value, v.isInt = n.Value, n.Tag == "!!int"
	return nil
}

type k8sLabelSelector struct {
	MatchLabels      map[string]string `yaml:"matchLabels"`
	MatchExpressions []yaml.Node       `yaml:"matchExpressions"`
}

// matches reports whether every matchLabels pair is among labels. Selectors
// with matchExpressions are not evaluated and count as not matching.
func (s k8sLabelSelector) matches(labels map[string]string) bool {
	if len(s.MatchExpressions) > 0 {
		return false
	}
	for k, v := range s.MatchLabels {
		if labels[k] != v {
			return false
		}
	}
	return true
}

type k8sPodTemplate struct {
	Metadata k8sObjectMeta `yaml:"metadata"`
	Spec     k8sPodSpec    `yaml:"spec"`
}

type k8sPodSpec struct {
	RestartPolicy                 string         `yaml:"restartPolicy"`
	EnableServiceLinks            *bool          `yaml:"enableServiceLinks"`
	TerminationGracePeriodSeconds *int64         `yaml:"terminationGracePeriodSeconds"`
	SecurityContext               k8sPodSecCtx   `yaml:"securityContext"`
	InitContainers                []k8sContainer `yaml:"initContainers"`
	Containers                    []k8sContainer `yaml:"containers"`
	TopologySpreadConstraints     []struct {
		TopologyKey   string           `yaml:"topologyKey"`
		LabelSelector k8sLabelSelector `yaml:"labelSelector"`
	} `yaml:"topologySpreadConstraints"`
	Affinity *struct {
		PodAntiAffinity *yaml.Node `yaml:"podAntiAffinity"`
	} `yaml:"affinity"`
}

type k8sPodSecCtx struct {
	RunAsNonRoot *bool  `yaml:"runAsNonRoot"`
	RunAsUser    *int64 `yaml:"runAsUser"`
}

type k8sContainerSecCtx struct {
	RunAsNonRoot             *bool  `yaml:"runAsNonRoot"`
	RunAsUser                *int64 `yaml:"runAsUser"`
	ReadOnlyRootFilesystem   *bool  `yaml:"readOnlyRootFilesystem"`
	AllowPrivilegeEscalation *bool  `yaml:"allowPrivilegeEscalation"`
	Privileged               *bool  `yaml:"privileged"`
	Capabilities             struct {
		Add  []string `yaml:"add"`
		Drop []string `yaml:"drop"`
	} `yaml:"capabilities"`
}

type k8sContainer struct {
	Name    string             `yaml:"name"`
	Image   string             `yaml:"image"`
	Command []string           `yaml:"command"`
	Args    []string           `yaml:"args"`
	Ports   []k8sContainerPort `yaml:"ports"`
	Env     []k8sEnvVar        `yaml:"env"`
	EnvFrom []struct {
		ConfigMapRef *struct {
			Name string `yaml:"name"`
		} `yaml:"configMapRef"`
		SecretRef *struct {
			Name string `yaml:"name"`
		} `yaml:"secretRef"`
	} `yaml:"envFrom"`
	ReadinessProbe  *k8sProbe          `yaml:"readinessProbe"`
	LivenessProbe   *k8sProbe          `yaml:"livenessProbe"`
	StartupProbe    *k8sProbe          `yaml:"startupProbe"`
	Lifecycle       *k8sLifecycle      `yaml:"lifecycle"`
	SecurityContext k8sContainerSecCtx `yaml:"securityContext"`
	Resources       struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
}

// resolvePort turns a probe, Service or annotation port (number or name)
// into the container port number it designates.
func (c *k8sContainer) resolvePort(p k8sIntOrString) (int, bool) {
	if p.isInt {
		n, err := strconv.Atoi(p.value)
		return n, err == nil && slices.ContainsFunc(c.Ports, func(cp k8sContainerPort) bool { return cp.ContainerPort == n })
	}
	for _, cp := range c.Ports {
		if cp.Name != "" && cp.Name == p.value {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

type k8sContainerPort struct {
	Name          string `yaml:"name"`
	ContainerPort int    `yaml:"containerPort"`
}

type k8sEnvVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom *struct {
		SecretKeyRef    *k8sKeySelector `yaml:"secretKeyRef"`
		ConfigMapKeyRef *k8sKeySelector `yaml:"configMapKeyRef"`
	} `yaml:"valueFrom"`
}

type k8sKeySelector struct {
	Name     string `yaml:"name"`
	Key      string `yaml:"key"`
	Optional *bool  `yaml:"optional"`
}

type k8sProbe struct {
	HTTPGet *k8sHTTPGet `yaml:"httpGet"`
}

type k8sHTTPGet struct {
	Path string         `yaml:"path"`
	Port k8sIntOrString `yaml:"port"`
}

type k8sLifecycle struct {
	PreStop *struct {
		Sleep *struct {
			Seconds int64 `yaml:"seconds"`
		} `yaml:"sleep"`
		Exec    *yaml.Node  `yaml:"exec"`
		HTTPGet *k8sHTTPGet `yaml:"httpGet"`
	} `yaml:"preStop"`
}

type k8sDeployment struct {
	Metadata k8sObjectMeta `yaml:"metadata"`
	Spec     struct {
		Replicas *int32           `yaml:"replicas"`
		Selector k8sLabelSelector `yaml:"selector"`
		Strategy struct {
			Type          string `yaml:"type"`
			RollingUpdate *struct {
				MaxUnavailable *k8sIntOrString `yaml:"maxUnavailable"`
			} `yaml:"rollingUpdate"`
		} `yaml:"strategy"`
		Template k8sPodTemplate `yaml:"template"`
	} `yaml:"spec"`
}

func (d *k8sDeployment) container() *k8sContainer {
	if len(d.Spec.Template.Spec.Containers) == 0 {
		return nil
	}
	return &d.Spec.Template.Spec.Containers[0]
}

type k8sJob struct {
	Metadata k8sObjectMeta `yaml:"metadata"`
	Spec     struct {
		BackoffLimit            *int32         `yaml:"backoffLimit"`
		TTLSecondsAfterFinished *int32         `yaml:"ttlSecondsAfterFinished"`
		Template                k8sPodTemplate `yaml:"template"`
	} `yaml:"spec"`
}

func (j *k8sJob) container() *k8sContainer {
	if len(j.Spec.Template.Spec.Containers) == 0 {
		return nil
	}
	return &j.Spec.Template.Spec.Containers[0]
}

type k8sService struct {
	Metadata k8sObjectMeta `yaml:"metadata"`
	Spec     struct {
		Type     string            `yaml:"type"`
		Selector map[string]string `yaml:"selector"`
		Ports    []k8sServicePort  `yaml:"ports"`
	} `yaml:"spec"`
}

type k8sServicePort struct {
	Name       string         `yaml:"name"`
	Port       int            `yaml:"port"`
	TargetPort k8sIntOrString `yaml:"targetPort"`
}

type k8sHPA struct {
	APIVersion string        `yaml:"apiVersion"`
	Metadata   k8sObjectMeta `yaml:"metadata"`
	Spec       struct {
		ScaleTargetRef struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Name       string `yaml:"name"`
		} `yaml:"scaleTargetRef"`
		MinReplicas *int32         `yaml:"minReplicas"`
		MaxReplicas int32          `yaml:"maxReplicas"`
		Metrics     []k8sHPAMetric `yaml:"metrics"`
	} `yaml:"spec"`
}

type k8sHPAMetric struct {
	Type     string `yaml:"type"`
	Resource *struct {
		Name   string `yaml:"name"`
		Target struct {
			Type               string `yaml:"type"`
			AverageUtilization *int32 `yaml:"averageUtilization"`
		} `yaml:"target"`
	} `yaml:"resource"`
}

type k8sPDB struct {
	Metadata k8sObjectMeta `yaml:"metadata"`
	Spec     struct {
		MinAvailable *k8sIntOrString  `yaml:"minAvailable"`
		Selector     k8sLabelSelector `yaml:"selector"`
	} `yaml:"spec"`
}

type k8sConfigMap struct {
	Metadata k8sObjectMeta     `yaml:"metadata"`
	Data     map[string]string `yaml:"data"`
}

type k8sSecret struct {
	file       string
	Metadata   k8sObjectMeta     `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
}

func (s *k8sSecret) hasKey(k string) bool {
	_, ok := s.value(k)
	return ok
}

func (s *k8sSecret) value(k string) (string, bool) {
	if v, ok := s.StringData[k]; ok {
		return v, true
	}
	if v, ok := s.Data[k]; ok {
		dec, err := base64.StdEncoding.DecodeString(v)
		return string(dec), err == nil
	}
	return "", false
}

type k8sKustomization struct {
	Resources []string `yaml:"resources"`
}

// ---------------------------------------------------------------------------
// Compose shapes. Compose accepts several spellings for most fields; these
// types normalise the ones the checks read.

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Secrets  map[string]struct {
		File string `yaml:"file"`
	} `yaml:"secrets"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       *composeBuild     `yaml:"build"`
	Command     composeStrings    `yaml:"command"`
	Environment composeEnv        `yaml:"environment"`
	DependsOn   composeDependsOn  `yaml:"depends_on"`
	Secrets     composeSecretRefs `yaml:"secrets"`
	Ports       composePorts      `yaml:"ports"`
	Volumes     []yaml.Node       `yaml:"volumes"`
	Healthcheck *struct {
		Test composeStrings `yaml:"test"`
	} `yaml:"healthcheck"`
	StopGracePeriod string `yaml:"stop_grace_period"`
}

// stringList is a list, or a string split on white space.
type composeStrings []string

func (l *composeStrings) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*l = strings.Fields(n.Value)
		return nil
	}
	var s []string
	err := n.Decode(&s)
	*l = s
	return err
}

// composeEnv is a map, or a list of KEY=VALUE.
type composeEnv map[string]string

func (e *composeEnv) UnmarshalYAML(n *yaml.Node) error {
	out := composeEnv{}
	if n.Kind == yaml.SequenceNode {
		var list []string
		if err := n.Decode(&list); err != nil {
			return err
		}
		for _, kv := range list {
			k, v, _ := strings.Cut(kv, "=")
			out[k] = v
		}
	} else {
		if err := n.Decode((*map[string]string)(&out)); err != nil {
			return err
		}
	}
	*e = out
	return nil
}

// dependsOn maps service → condition; the short list form means
// service_started.
type composeDependsOn map[string]string

func (d *composeDependsOn) UnmarshalYAML(n *yaml.Node) error {
	out := composeDependsOn{}
	if n.Kind == yaml.SequenceNode {
		var list []string
		if err := n.Decode(&list); err != nil {
			return err
		}
		for _, s := range list {
			out[s] = "service_started"
		}
	} else {
		var m map[string]struct {
			Condition string `yaml:"condition"`
		}
		if err := n.Decode(&m); err != nil {
			return err
		}
		for s, c := range m {
			if c.Condition == "" {
				c.Condition = "service_started"
			}
			out[s] = c.Condition
		}
	}
	*d = out
	return nil
}

func composeDeps(kv ...string) composeDependsOn {
	out := composeDependsOn{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// composeSecretRefs lists the secret names a service receives (short or long form).
type composeSecretRefs []string

func (s *composeSecretRefs) UnmarshalYAML(n *yaml.Node) error {
	var items []yaml.Node
	if err := n.Decode(&items); err != nil {
		return err
	}
	for _, it := range items {
		if it.Kind == yaml.ScalarNode {
			*s = append(*s, it.Value)
			continue
		}
		var long struct {
			Source string `yaml:"source"`
		}
		if err := it.Decode(&long); err != nil {
			return err
		}
		*s = append(*s, long.Source)
	}
	return nil
}

// composePorts keeps published ports as "[host:]container[/proto]".
type composePorts []string

func (p *composePorts) UnmarshalYAML(n *yaml.Node) error {
	var items []yaml.Node
	if err := n.Decode(&items); err != nil {
		return err
	}
	for _, it := range items {
		if it.Kind == yaml.ScalarNode {
			*p = append(*p, it.Value)
			continue
		}
		var long struct {
			Target    string `yaml:"target"`
			Published string `yaml:"published"`
		}
		if err := it.Decode(&long); err != nil {
			return err
		}
		*p = append(*p, long.Published+":"+long.Target)
	}
	return nil
}

// composeBuild is a context path, or a map with context and dockerfile.
type composeBuild struct {
	Context    string `yaml:"context"`
	Dockerfile string `yaml:"dockerfile"`
}

func (b *composeBuild) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		b.Context = n.Value
		return nil
	}
	type plain composeBuild
	return n.Decode((*plain)(b))
}

// ---------------------------------------------------------------------------
// Dockerfile

type dockerStage struct {
	Base         string
	Name         string
	Instructions []dockerInstruction
}

type dockerInstruction struct {
	Keyword string // upper case
	Args    string
}

// deployParseDockerfile splits a Dockerfile into stages of instructions, joining
// continuation lines and dropping comments. Heredocs are not supported.
func deployParseDockerfile(t *testing.T, data []byte) []dockerStage {
	t.Helper()
	var (
		stages  []dockerStage
		logical strings.Builder
	)
	flush := func() {
		line := strings.TrimSpace(logical.String())
		logical.Reset()
		if line == "" {
			return
		}
		kw, args, _ := strings.Cut(line, " ")
		in := dockerInstruction{Keyword: strings.ToUpper(kw), Args: strings.TrimSpace(args)}
		if in.Keyword == "FROM" {
			var s dockerStage
			fields := strings.Fields(in.Args)
			for i := 0; i < len(fields); i++ {
				switch {
				case strings.HasPrefix(fields[i], "--"):
				case s.Base == "":
					s.Base = fields[i]
				case strings.EqualFold(fields[i], "AS") && i+1 < len(fields):
					s.Name = fields[i+1]
					i++
				}
			}
			stages = append(stages, s)
			return
		}
		if len(stages) == 0 {
			if in.Keyword != "ARG" {
				t.Fatalf("Dockerfile: %s before the first FROM", in.Keyword)
			}
			return
		}
		last := &stages[len(stages)-1]
		last.Instructions = append(last.Instructions, in)
	}
	for _, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimRight(raw, " \t\r")
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue // comments, also between continuation lines
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			logical.WriteString(cont)
			logical.WriteString(" ")
			continue
		}
		logical.WriteString(line)
		flush()
	}
	flush()
	if len(stages) == 0 {
		t.Fatal("Dockerfile: no FROM")
	}
	return stages
}

// ---------------------------------------------------------------------------
// Small helpers

func deployPtr[T any](v T) *T { return &v }

func deployDeref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func deployIsDigits(s string) bool {
	_, err := strconv.Atoi(s)
	return s != "" && err == nil
}
