/**
 * Silt's alarms. Every one fires on the first occurrence in a period (an error, a dead letter, a
 * rejected file), a quiet period is not a breach, and all notify the same SNS topic if there is
 * one (without, they still show in CloudWatch).
 */
import {
  aws_cloudwatch as cloudwatch,
  aws_cloudwatch_actions as cwActions,
  Duration,
  aws_sns as sns,
} from "aws-cdk-lib";
import type { Construct } from "constructs";
import { METRICS_DIMENSION, METRICS_NAMESPACE } from "../lib/metrics.ts";

export type AlarmSpec = Pick<cloudwatch.AlarmProps, "alarmDescription" | "metric">;

export class Alarms {
  readonly #scope: Construct;
  readonly #action: cloudwatch.IAlarmAction | undefined;

  constructor(scope: Construct, topicArn: string | undefined) {
    this.#scope = scope;
    this.#action =
      topicArn === undefined
        ? undefined
        : new cwActions.SnsAction(sns.Topic.fromTopicArn(scope, "AlarmTopic", topicArn));
  }

  add(id: string, spec: AlarmSpec): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this.#scope, id, {
      ...spec,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    if (this.#action !== undefined) alarm.addAlarmAction(this.#action);
    return alarm;
  }
}

/** A metric the functions write as EMF lines (lib/metrics.ts), summed over five minutes. */
export function siltMetric(metricName: string, operation: string): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { [METRICS_DIMENSION]: operation },
    period: Duration.minutes(5),
    statistic: "Sum",
  });
}
