import { useEffect, useState } from "react";
import { listSkills } from "../api/extensions";
import { useGateway } from "../api/gateway";
import type { SkillOption } from "../lib/slash";

/** Enabled skills for the composer's `/` menu (loaded once; a failure leaves the menu empty). */
export function useEnabledSkills(): SkillOption[] {
  const { fetch } = useGateway();
  const [skills, setSkills] = useState<SkillOption[]>([]);
  useEffect(() => {
    let live = true;
    listSkills(fetch)
      .then((r) => {
        if (live) setSkills(r.skills.filter((s) => s.enabled).map(({ name, description }) => ({ name, description })));
      })
      .catch(() => {
        /* no skills API (or not allowed): no menu */
      });
    return () => {
      live = false;
    };
  }, [fetch]);
  return skills;
}
