package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/harness-dev/harness/dockerws"
	"github.com/harness-dev/harness/internal/toolchain"
	"github.com/harness-dev/harness/internal/workspace"
)

// sandbox sets what of the host the Docker workspace of the project at root
// sees besides its copy (DESIGN §15, toolchains in the sandbox): the
// project's toolchains, dependency caches and ignored dependency folders,
// read-only, as toolchain.Detect finds them, and the project's build cache
// volume (only for a project that needs a toolchain). It returns a line for each thing the project needs that the
// sandbox will not have, for the banner and exec's stderr.
//
// A daemon on another machine (DOCKER_HOST=tcp://…) cannot see this
// machine's paths: the toolchain mounts are left out and a line says so;
// the cache volume, which lives on the daemon, stays.
func (a *App) sandbox(ctx context.Context, root string, o *dockerws.Options) []string {
	plan, notes := SandboxPlan(ctx, root, a.SecretEnv())
	if len(plan.Needs) == 0 {
		return notes // nothing to build: no cache either
	}
	o.Toolchain = plan
	o.CacheVolume, o.CacheProject, o.CacheBytes = dockerws.CacheVolume(root, os.Getuid()), root, a.Opts.MaxCacheBytes
	return notes
}

// SandboxPlan is what the Docker workspace of the project at root gets of
// this machine (toolchain.Detect, with host processes' environment less
// the secretEnv variables), and a line for each thing the project needs
// that the sandbox will not have. With a daemon elsewhere the plan keeps
// its Needs and nothing else.
func SandboxPlan(ctx context.Context, root string, secretEnv []string) (toolchain.Plan, []string) {
	shadow := ""
	if dir, err := os.UserCacheDir(); err == nil {
		shadow = filepath.Join(dir, "harness", "shadow")
	}
	plan := toolchain.Detect(ctx, root, toolchain.Host{Env: workspace.HostEnv(secretEnv), ShadowDir: shadow})
	if len(plan.Needs) == 0 {
		return plan, nil
	}
	if local, host := dockerws.DaemonIsLocal(""); !local {
		var names []string
		for _, n := range plan.Needs {
			names = append(names, n.Name)
		}
		return toolchain.Plan{Needs: plan.Needs}, []string{"the project needs " + strings.Join(names, ", ") + ", but toolchain mounts need a Docker daemon on this machine (the daemon is at " + host +
			"): the sandbox has only the image's own tools; build an image that has them there (make sandbox-image IMAGE_PACKAGES=… on that machine)"}
	}
	return plan, plan.Missing
}
